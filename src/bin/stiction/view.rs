//! `stiction view RUN_DIR`: serves a run's replay folder (`RUN_DIR/replay/`, written by
//! `--replay`) over HTTP on 127.0.0.1 and prints its address; with `--open`, opens it in the
//! default browser. A replay is served rather than opened as a file because browsers do not
//! load ES modules (three.js) from `file://`.
//!
//! The server is std's `TcpListener`, one thread per connection, `GET` and `HEAD` of the
//! folder's files only (no listing, no path leaving the folder), `Connection: close`.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};

use clap::Args;

use stiction::error::{Error, Result};
use stiction::report::replay::{PAGE, REPLAY_DIR};

/// Arguments of `stiction view`.
#[derive(Args)]
pub struct ViewArgs {
    /// A run's output folder written with --replay (or its replay/ folder).
    #[arg(value_name = "RUN_DIR")]
    dir: PathBuf,
    /// Port on 127.0.0.1 (0: any free port).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Also open the replay in the default browser.
    #[arg(long)]
    open: bool,
}

/// `stiction view RUN_DIR [--port N] [--open]`: serves until stopped (Ctrl-C).
pub fn view(args: &ViewArgs) -> Result<()> {
    let root = replay_folder(&args.dir)?;
    let listener = TcpListener::bind(("127.0.0.1", args.port)).map_err(|e| {
        Error::invalid(
            "--port",
            args.port,
            &format!("cannot listen on 127.0.0.1:{}: {e}", args.port),
        )
    })?;
    let address = listener.local_addr().map_err(|source| Error::Io {
        path: root.clone(),
        source,
    })?;
    let url = format!("http://{address}/{PAGE}");
    println!("serving the replay in {} at", root.display());
    println!("  {url}");
    println!("(Ctrl-C stops)");
    // A script reading the address waits for it; stdout may be a pipe.
    let _ = std::io::stdout().flush();
    if args.open {
        open_browser(&url);
    }
    for stream in listener.incoming() {
        // A connection that fails before its request is the client's business.
        let Ok(stream) = stream else { continue };
        let root = root.clone();
        std::thread::spawn(move || {
            // A client that goes away mid-response is not an error of the server.
            let _ = serve(stream, &root);
        });
    }
    Ok(())
}

/// The folder holding the replay page: `dir/replay/` or `dir` itself.
///
/// # Errors
/// [`Error::Io`] naming `dir` when neither holds `replay.html`, saying how to write one.
fn replay_folder(dir: &Path) -> Result<PathBuf> {
    [dir.join(REPLAY_DIR), dir.to_path_buf()]
        .into_iter()
        .find(|d| d.join(PAGE).is_file())
        .ok_or_else(|| Error::Io {
            path: dir.to_path_buf(),
            source: std::io::Error::new(
                std::io::ErrorKind::NotFound,
                format!(
                    "no replay here ({REPLAY_DIR}/{PAGE} is missing): write one with --replay, \
                     e.g. `stiction simulate falling-sphere --replay`, then `stiction view` its \
                     output folder"
                ),
            ),
        })
}

/// Answers one request on `stream` with a file of `root`.
fn serve(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers are read and ignored (up to the blank line).
    let mut line = String::new();
    while reader.read_line(&mut line)? > 2 {
        line.clear();
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"GET only\n",
            true,
        );
    }
    let path = target.split(['?', '#']).next().unwrap_or("");
    let relative = match path.trim_start_matches('/') {
        "" => PAGE,
        p => p,
    };
    let Some(file) = file_in(root, relative) else {
        return respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        );
    };
    match std::fs::read(&file) {
        Ok(body) => respond(
            &mut stream,
            "200 OK",
            content_type(&file),
            &body,
            method == "GET",
        ),
        Err(_) => respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            true,
        ),
    }
}

/// `root/relative` when `relative` is a plain relative path (no `..`, no root, no prefix).
fn file_in(root: &Path, relative: &str) -> Option<PathBuf> {
    let relative = Path::new(relative);
    relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)))
        .then(|| root.join(relative))
}

fn content_type(file: &Path) -> &'static str {
    match file.extension().and_then(|e| e.to_str()) {
        Some("html") => "text/html; charset=utf-8",
        Some("js") => "text/javascript; charset=utf-8",
        Some("json") => "application/json",
        Some("css") => "text/css",
        Some("png") => "image/png",
        Some("gif") => "image/gif",
        _ => "application/octet-stream",
    }
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    content_type: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
}

/// Opens `url` in the default browser (`xdg-open`, `open` on macOS, `start` on Windows); a
/// failure is printed, the server keeps serving.
fn open_browser(url: &str) {
    let mut command = if cfg!(target_os = "macos") {
        std::process::Command::new("open")
    } else if cfg!(windows) {
        let mut c = std::process::Command::new("cmd");
        c.args(["/C", "start", ""]);
        c
    } else {
        std::process::Command::new("xdg-open")
    };
    if let Err(e) = command.arg(url).spawn() {
        eprintln!("could not open a browser ({e}); open {url} yourself");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_relative_paths_are_served() {
        let root = Path::new("/srv/replay");
        assert_eq!(
            file_in(root, "three/three.core.js"),
            Some(root.join("three/three.core.js"))
        );
        assert_eq!(file_in(root, "../run.json"), None);
        assert_eq!(file_in(root, "three/../../x"), None);
        assert_eq!(file_in(root, "/etc/passwd"), None);
    }

    #[test]
    fn a_folder_without_a_replay_is_refused_with_the_way_to_write_one() {
        let dir = std::env::temp_dir().join(format!("stiction-view-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let message = replay_folder(&dir).unwrap_err().to_string();
        assert!(message.contains("--replay"), "{message}");
        std::fs::create_dir_all(dir.join(REPLAY_DIR)).unwrap();
        std::fs::write(dir.join(REPLAY_DIR).join(PAGE), "<html>").unwrap();
        assert_eq!(replay_folder(&dir).unwrap(), dir.join(REPLAY_DIR));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
