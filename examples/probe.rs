use stiction::problem::load_problem;
use stiction::simulate::run;
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let mut p = load_problem(std::path::Path::new(&args[1])).unwrap();
    if let Some(a) = args.get(2) { p.simulator.settings.approximation = a.parse().unwrap(); }
    if let Some(d) = args.get(3) { p.simulator.settings.dt = d.parse().unwrap(); }
    let t0 = std::time::Instant::now();
    let rec = run(&mut p.simulator, &p.initial_state, p.duration, |_, _| {}).unwrap();
    let every = std::env::var("EVERY").ok().and_then(|s| s.parse().ok()).unwrap_or((rec.reports.len() / 40).max(1));
    for (k, r) in rec.reports.iter().enumerate() {
        if k % every == 0 || k < 3 {
            let s = &rec.states[k+1];
            let fz: f64 = r.contacts.iter().map(|c| c.normal_force).sum();
            let ft: f64 = r.contacts.iter().map(|c| c.tangential_force).sum();
            let slip = r.contacts.iter().map(|c| c.slip).fold(0.0, f64::max);
            let pen = r.contacts.iter().map(|c| c.penetration).fold(f64::NAN, f64::max);
            println!("t {:.4} q {:?} v {:?} nc {} it {} fn {:.4} ft {:.4} slip {:.3e} pen {:.3e}", s.t, s.q.iter().map(|x| format!("{x:.5}")).collect::<Vec<_>>(), s.v.iter().map(|x| format!("{x:.4}")).collect::<Vec<_>>(), r.contacts.len(), r.stats.iterations, fz, ft, slip, pen);
        }
    }
    eprintln!("{} steps in {:?}", rec.reports.len(), t0.elapsed());
}
