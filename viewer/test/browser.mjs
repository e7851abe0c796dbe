// The replay in a real browser (headless Chromium driven by playwright-core): for each run
// folder written with --replay, `stiction view` serves it, the page is opened paused, and at two
// times the test
//
//   1. checks that the body the page draws is where trajectory.csv (the simulator's table,
//      written by other code than the replay) says, to f32 precision;
//   2. projects that position with the page's camera (window.stictionReplay.project), takes a
//      screenshot, and checks that most pixels of a small disc around the projected centre have
//      the body's colour (its hue, saturated);
//   3. checks that the two screenshots differ;
//
// and fails on any error the page logs. Usage (scripts/viewer/test.sh runs it):
//
//   node viewer/test/browser.mjs STICTION_BINARY SCREENSHOT_DIR RUN_DIR:BODY[:T1,T2] ...
//
// BODY may be `top-sphere`: the sphere geometry's body highest at each time. Chromium is
// $CHROMIUM or /usr/bin/chromium.

import { spawn } from 'node:child_process';
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import { chromium } from 'playwright-core';

const [binary, screenshotDir, ...runs] = process.argv.slice(2);
if (!binary || !screenshotDir || runs.length === 0) {
  console.error('usage: node viewer/test/browser.mjs STICTION_BINARY SCREENSHOT_DIR RUN_DIR:BODY[:T1,T2] ...');
  process.exit(2);
}
mkdirSync(screenshotDir, { recursive: true });

// Decodes an 8-bit RGB or RGBA, non-interlaced PNG (what Chromium's screenshots are).
function decodePng(buffer) {
  let offset = 8;
  let width = 0, height = 0, channels = 0;
  const idat = [];
  while (offset < buffer.length) {
    const length = buffer.readUInt32BE(offset);
    const type = buffer.toString('ascii', offset + 4, offset + 8);
    const data = buffer.subarray(offset + 8, offset + 8 + length);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      const [depth, colourType, , , interlace] = data.subarray(8, 13);
      if (depth !== 8 || interlace !== 0 || (colourType !== 2 && colourType !== 6)) {
        throw new Error(`unsupported PNG: depth ${depth}, colour type ${colourType}, interlace ${interlace}`);
      }
      channels = colourType === 6 ? 4 : 3;
    } else if (type === 'IDAT') {
      idat.push(data);
    }
    offset += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const pixels = Buffer.alloc(height * stride);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    for (let x = 0; x < stride; x++) {
      const value = raw[y * (stride + 1) + 1 + x];
      const a = x >= channels ? pixels[y * stride + x - channels] : 0;
      const b = y > 0 ? pixels[(y - 1) * stride + x] : 0;
      const c = x >= channels && y > 0 ? pixels[(y - 1) * stride + x - channels] : 0;
      let predictor = 0;
      if (filter === 1) predictor = a;
      else if (filter === 2) predictor = b;
      else if (filter === 3) predictor = (a + b) >> 1;
      else if (filter === 4) {
        const p = a + b - c, pa = Math.abs(p - a), pb = Math.abs(p - b), pc = Math.abs(p - c);
        predictor = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
      }
      pixels[y * stride + x] = (value + predictor) & 0xff;
    }
  }
  return { width, height, channels, pixels };
}

function hsv(r, g, b) {
  const max = Math.max(r, g, b), min = Math.min(r, g, b), d = max - min;
  let h = 0;
  if (d > 0) {
    if (max === r) h = ((g - b) / d) % 6;
    else if (max === g) h = (b - r) / d + 2;
    else h = (r - g) / d + 4;
  }
  return { h: (h * 60 + 360) % 360, s: max > 0 ? d / max : 0, v: max / 255 };
}

// Fraction of the pixels within `radius` of (cx, cy) whose hue is within 20° of `colour`'s,
// with a saturation of at least 0.2 (lighting changes brightness, not hue).
function colourFraction(image, cx, cy, radius, colour) {
  const want = hsv(parseInt(colour.slice(1, 3), 16), parseInt(colour.slice(3, 5), 16), parseInt(colour.slice(5, 7), 16));
  let hits = 0, total = 0;
  for (let y = Math.floor(cy - radius); y <= Math.ceil(cy + radius); y++) {
    for (let x = Math.floor(cx - radius); x <= Math.ceil(cx + radius); x++) {
      if ((x - cx) ** 2 + (y - cy) ** 2 > radius * radius) continue;
      if (x < 0 || y < 0 || x >= image.width || y >= image.height) { total++; continue; }
      const k = (y * image.width + x) * image.channels;
      const got = hsv(image.pixels[k], image.pixels[k + 1], image.pixels[k + 2]);
      const dh = Math.min(Math.abs(got.h - want.h), 360 - Math.abs(got.h - want.h));
      if (dh < 20 && got.s > 0.2) hits++;
      total++;
    }
  }
  return total > 0 ? hits / total : 0;
}

// trajectory.csv: the row at time t (the nearest) as {column: value}.
function trajectoryRow(runDir, t) {
  const lines = readFileSync(join(runDir, 'trajectory.csv'), 'utf8').trim().split('\n');
  const header = lines[0].split(',');
  let best = null;
  for (const line of lines.slice(1)) {
    const values = line.split(',').map(Number);
    if (best === null || Math.abs(values[0] - t) < Math.abs(best[0] - t)) best = values;
  }
  return Object.fromEntries(header.map((h, i) => [h, best[i]]));
}

// Starts `stiction view RUN_DIR` and resolves with the address it prints.
function serve(runDir) {
  return new Promise((resolve, reject) => {
    const child = spawn(binary, ['view', runDir, '--port', '0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '', err = '';
    child.stdout.on('data', d => {
      out += d;
      const match = out.match(/http:\/\/127\.0\.0\.1:\d+\/replay\.html/);
      if (match) resolve({ child, url: match[0] });
    });
    child.stderr.on('data', d => { err += d; });
    child.on('exit', code => reject(new Error(`stiction view ${runDir} exited with ${code}: ${err}`)));
  });
}

function check(condition, message) {
  if (!condition) throw new Error(message);
  console.log(`  ok: ${message}`);
}

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync', '--use-angle=swiftshader', '--enable-unsafe-swiftshader'],
});
let failed = false;
try {
  for (const run of runs) {
    const [runDir, bodySpec, timeSpec] = run.split(':');
    console.log(`${runDir} (${bodySpec})`);
    const { child, url } = await serve(runDir);
    const page = await browser.newPage({ viewport: { width: 960, height: 640 } });
    const errors = [];
    page.on('pageerror', e => errors.push(String(e)));
    page.on('console', m => { if (m.type() === 'error') errors.push(m.text()); });
    try {
      await page.goto(`${url}?paused=1`);
      await page.waitForFunction(() => window.stictionReplay !== undefined, null, { timeout: 60000 });
      const header = await page.evaluate(() => window.stictionReplay.header);
      const times = header.times;
      // Two frame times (the drawn poses are then the recorded ones, not interpolated).
      const wanted = timeSpec ? timeSpec.split(',').map(Number) : [0.25 * times.at(-1), 0.75 * times.at(-1)];
      const frameTimes = wanted.map(w => times.reduce((a, b) => (Math.abs(b - w) < Math.abs(a - w) ? b : a)));
      const shots = [];
      for (const t of frameTimes) {
        let body = bodySpec;
        if (bodySpec === 'top-sphere') {
          const spheres = header.geometries.filter(g => g.shape.type === 'sphere' && g.body !== null);
          const heights = spheres.map(g => trajectoryRow(runDir, t)[`${header.bodies[g.body].name}.pz`]);
          body = header.bodies[spheres[heights.indexOf(Math.max(...heights))].body].name;
        }
        const b = header.bodies.findIndex(x => x.name === body);
        check(b >= 0, `the replay has body ${body}`);
        const radius = header.geometries.find(g => g.body === b && g.shape.type === 'sphere')?.shape.radius;
        check(radius !== undefined, `${body} is a sphere`);
        const shown = await page.evaluate(t => window.stictionReplay.setTime(t), t);
        check(Math.abs(shown - t) < 1e-9, `the page shows t = ${t}`);
        const row = trajectoryRow(runDir, t);
        const p = [row[`${body}.px`], row[`${body}.py`], row[`${body}.pz`]];
        const drawn = await page.evaluate(([name, t]) => window.stictionReplay.bodyPosition(name, t), [body, t]);
        const error = Math.max(...p.map((x, i) => Math.abs(x - drawn[i])));
        check(error < 1e-6 * Math.max(1, ...p.map(Math.abs)),
          `${body} at t = ${t} s is drawn at trajectory.csv's position (${p.map(x => x.toFixed(4))}), error ${error.toExponential(1)} m`);
        const centre = await page.evaluate(p => window.stictionReplay.project(p), p);
        // The projected radius: the distance to the projection of a point one radius off
        // the centre, perpendicular to the view (along the camera's up vector, z).
        const rim = await page.evaluate(p => window.stictionReplay.project(p), [p[0], p[1], p[2] + radius]);
        const pixels = Math.hypot(rim.x - centre.x, rim.y - centre.y);
        const png = await page.screenshot({ type: 'png' });
        const name = `${runDir.split('/').filter(Boolean).at(-1)}-t${t.toFixed(3)}.png`;
        writeFileSync(join(screenshotDir, name), png);
        const image = decodePng(png);
        const fraction = colourFraction(image, centre.x, centre.y, Math.max(2, 0.4 * pixels), header.bodies[b].colour);
        check(pixels > 3, `${body} is ${pixels.toFixed(1)} px in radius on screen`);
        check(fraction > 0.6,
          `${(100 * fraction).toFixed(0)} % of the pixels around (${centre.x.toFixed(0)}, ${centre.y.toFixed(0)}) have ${body}'s colour ${header.bodies[b].colour} (${name})`);
        shots.push({ image, body, centre, pixels, colour: header.bodies[b].colour });
      }
      // The control: where the body was at the first time, the second screenshot does not
      // show it (when it moved more than 3 of its radii on screen).
      const [first, second] = shots;
      const moved = Math.hypot(first.centre.x - second.centre.x, first.centre.y - second.centre.y);
      if (first.body === second.body && moved > 3 * first.pixels) {
        const left = colourFraction(second.image, first.centre.x, first.centre.y, Math.max(2, 0.4 * first.pixels), first.colour);
        check(left < 0.2, `at t = ${frameTimes[1]} s only ${(100 * left).toFixed(0)} % of the pixels where ${first.body} was at t = ${frameTimes[0]} s have its colour`);
      }
      const [a, c] = shots.map(s => s.image);
      let differing = 0;
      for (let k = 0; k < a.pixels.length; k += a.channels) {
        if (Math.abs(a.pixels[k] - c.pixels[k]) + Math.abs(a.pixels[k + 1] - c.pixels[k + 1]) + Math.abs(a.pixels[k + 2] - c.pixels[k + 2]) > 30) differing++;
      }
      check(differing > 200, `the screenshots at t = ${frameTimes.join(' and ')} s differ in ${differing} pixels`);
      check(errors.length === 0, `the page logged no error${errors.length ? `: ${errors.join('; ')}` : ''}`);
    } catch (e) {
      failed = true;
      console.error(`FAILED ${runDir}: ${e.message}`);
    } finally {
      await page.close();
      child.kill();
    }
  }
} finally {
  await browser.close();
}
process.exit(failed ? 1 : 0);
