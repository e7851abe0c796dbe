// stiction's 3-D replay: reads a recording (NAME.json header + NAME.bin arrays; the format is
// documented in src/report/replay.rs) and draws it with three.js: the geometries on their
// bodies, contact force arrows, pressure-field polygons coloured by pressure with a colour
// bar, targets and markers; a timeline with play/pause/scrub; an orbit camera (z up).
//
// URL parameters: t (s, the time shown first), paused=1 (start paused), recording=NAME.
// window.stictionReplay is the page's interface for scripts and tests: setTime(t),
// time(), bodyPosition(name, t), project([x, y, z]) (canvas pixels), header.

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const params = new URLSearchParams(location.search);
const status = document.getElementById('status');
const view = document.getElementById('view');

function section(header, buffer, name) {
  const s = header.sections[name];
  return s.type === 'u32'
    ? new Uint32Array(buffer, s.offset, s.count)
    : new Float32Array(buffer, s.offset, s.count);
}

async function fetchOk(url, kind) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return kind === 'json' ? response.json() : response.arrayBuffer();
}

// Three.js geometry of a shape in its geometry frame (capsules and cylinders along z).
function shapeGeometry(shape, planeSize) {
  switch (shape.type) {
    case 'sphere': return new THREE.SphereGeometry(shape.radius, 32, 16);
    case 'box': {
      const [x, y, z] = shape.half_extents;
      return new THREE.BoxGeometry(2 * x, 2 * y, 2 * z);
    }
    case 'capsule':
      return new THREE.CapsuleGeometry(shape.radius, 2 * shape.half_length, 8, 24).rotateX(Math.PI / 2);
    case 'cylinder':
      return new THREE.CylinderGeometry(shape.radius, shape.radius, 2 * shape.half_length, 32).rotateX(Math.PI / 2);
    case 'ellipsoid': {
      const [a, b, c] = shape.semi_axes;
      return new THREE.SphereGeometry(1, 32, 16).scale(a, b, c);
    }
    case 'half-space': return new THREE.PlaneGeometry(planeSize, planeSize);
    case 'mesh': {
      const g = new THREE.BufferGeometry();
      g.setAttribute('position', new THREE.Float32BufferAttribute(shape.vertices, 3));
      g.setIndex(shape.triangles);
      const flat = g.toNonIndexed();
      flat.computeVertexNormals();
      return flat;
    }
    default: throw new Error(`unknown shape ${shape.type}`);
  }
}

function poseMatrix(p, q) {
  const m = new THREE.Matrix4();
  m.compose(new THREE.Vector3(p[0], p[1], p[2]), new THREE.Quaternion(q[1], q[2], q[3], q[0]), new THREE.Vector3(1, 1, 1));
  return m;
}

// Yellow (0) to red (pressure_max), as the GIF and the colour bar.
function pressureColour(p, pmax, out) {
  const s = pmax > 0 ? Math.min(Math.max(p / pmax, 0), 1) : 0;
  return out.setRGB(1, 1 - s, 0, THREE.SRGBColorSpace);
}

class Replay {
  constructor(header, buffer) {
    this.header = header;
    this.times = header.times;
    this.nb = header.bodies.length;
    this.poses = section(header, buffer, 'poses');
    this.contactOffsets = section(header, buffer, 'contact_offsets');
    this.contacts = section(header, buffer, 'contacts');
    this.polygonOffsets = section(header, buffer, 'polygon_offsets');
    this.vertexOffsets = section(header, buffer, 'polygon_vertex_offsets');
    this.pressures = section(header, buffer, 'polygon_pressures');
    this.vertices = section(header, buffer, 'polygon_vertices');
    this.markerData = section(header, buffer, 'markers');
    this.bodyIndex = new Map(header.bodies.map((b, i) => [b.name, i]));
  }

  // Frame i ≤ frame of t < i + 1 and the fraction s of the way to i + 1.
  locate(t) {
    const times = this.times;
    const n = times.length;
    if (t <= times[0] || n === 1) return [0, 0];
    if (t >= times[n - 1]) return [n - 1, 0];
    let lo = 0, hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >> 1;
      if (times[mid] <= t) lo = mid; else hi = mid;
    }
    return [lo, (t - times[lo]) / (times[hi] - times[lo])];
  }

  // Position and orientation of body b at time t, interpolated between frames.
  pose(b, t, position, quaternion) {
    const [i, s] = this.locate(t);
    const j = Math.min(i + 1, this.times.length - 1);
    const a = (i * this.nb + b) * 7, c = (j * this.nb + b) * 7;
    const P = this.poses;
    position.set(P[a] + s * (P[c] - P[a]), P[a + 1] + s * (P[c + 1] - P[a + 1]), P[a + 2] + s * (P[c + 2] - P[a + 2]));
    const qa = new THREE.Quaternion(P[a + 4], P[a + 5], P[a + 6], P[a + 3]);
    const qc = new THREE.Quaternion(P[c + 4], P[c + 5], P[c + 6], P[c + 3]);
    quaternion.slerpQuaternions(qa, qc, s);
  }

  // The frame whose contacts are shown at t: the nearest one.
  contactFrame(t) {
    const [i, s] = this.locate(t);
    return s > 0.5 ? Math.min(i + 1, this.times.length - 1) : i;
  }
}

function sceneBounds(replay, radii) {
  const box = new THREE.Box3();
  const P = replay.poses;
  for (let f = 0; f < replay.times.length; f++) {
    for (let b = 0; b < replay.nb; b++) {
      const k = (f * replay.nb + b) * 7;
      const r = radii[b];
      if (r === undefined) continue;
      box.expandByPoint(new THREE.Vector3(P[k] - r, P[k + 1] - r, P[k + 2] - r));
      box.expandByPoint(new THREE.Vector3(P[k] + r, P[k + 1] + r, P[k + 2] + r));
    }
  }
  return box;
}

async function main() {
  const list = await fetchOk('recordings.json', 'json');
  if (list.length === 0) throw new Error('recordings.json lists no recording');
  const wanted = params.get('recording');
  const entry = list.find(r => r.name === wanted) ?? list[0];
  const select = document.getElementById('recording');
  if (list.length > 1) {
    select.hidden = false;
    for (const r of list) select.add(new Option(r.title, r.name, false, r.name === entry.name));
    select.addEventListener('change', () => {
      const url = new URL(location.href);
      url.searchParams.set('recording', select.value);
      location.href = url.toString();
    });
  }
  const [header, buffer] = await Promise.all([
    fetchOk(`${entry.name}.json`, 'json'),
    fetchOk(`${entry.name}.bin`, 'bin'),
  ]);
  if (header.format !== 'stiction-replay' || header.version !== 1) {
    throw new Error(`${entry.name}.json is not a version-1 stiction replay`);
  }
  const replay = new Replay(header, buffer);
  document.title = `stiction replay: ${header.title}`;
  document.getElementById('title').textContent = header.title;

  const renderer = new THREE.WebGLRenderer({ antialias: true, preserveDrawingBuffer: true });
  renderer.setPixelRatio(window.devicePixelRatio);
  view.appendChild(renderer.domElement);
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0xf4f4f4);
  scene.add(new THREE.HemisphereLight(0xffffff, 0x777777, 2.0));
  const sun = new THREE.DirectionalLight(0xffffff, 1.5);
  scene.add(sun);

  // Bodies (groups moved every frame) and their geometries; world geometry is static.
  const groups = header.bodies.map(() => new THREE.Group());
  groups.forEach(g => scene.add(g));
  const radii = [];
  const halfSpaces = [];
  for (const g of header.geometries) {
    if (g.shape.type === 'half-space') { halfSpaces.push(g); continue; }
    const geometry = shapeGeometry(g.shape, 0);
    geometry.computeBoundingSphere();
    const colour = g.body === null ? '#a0a0a0' : header.bodies[g.body].colour;
    // World geometry (a container's walls) is translucent: the bodies inside show through.
    const material = g.body === null
      ? new THREE.MeshStandardMaterial({ color: colour, roughness: 0.9, metalness: 0, transparent: true, opacity: 0.25, depthWrite: false })
      : new THREE.MeshStandardMaterial({ color: colour, roughness: 0.7, metalness: 0 });
    const mesh = new THREE.Mesh(geometry, material);
    mesh.applyMatrix4(poseMatrix(g.p_BG, g.q_BG));
    mesh.name = g.name;
    if (g.shape.type === 'sphere') {
      // A darker meridian shows the sphere turning.
      const ring = new THREE.Mesh(new THREE.TorusGeometry(g.shape.radius * 1.002, g.shape.radius * 0.03, 6, 48),
        new THREE.MeshStandardMaterial({ color: new THREE.Color(colour).multiplyScalar(0.5) }));
      ring.rotateX(Math.PI / 2);
      mesh.add(ring);
    }
    if (g.body === null) {
      scene.add(mesh);
    } else {
      groups[g.body].add(mesh);
      const reach = new THREE.Vector3(...g.p_BG).length() + geometry.boundingSphere.radius;
      radii[g.body] = Math.max(radii[g.body] ?? 0, reach);
    }
  }
  const bounds = sceneBounds(replay, radii);
  for (const t of header.targets) bounds.expandByPoint(new THREE.Vector3(...t.position));
  if (bounds.isEmpty()) bounds.set(new THREE.Vector3(-0.5, -0.5, 0), new THREE.Vector3(0.5, 0.5, 0.5));
  const centre = bounds.getCenter(new THREE.Vector3());
  const span = Math.max(bounds.getSize(new THREE.Vector3()).length(), 0.1);

  // Half-spaces: a square of 4 scene sizes around the scene's centre, with a grid.
  for (const g of halfSpaces) {
    const size = 4 * span;
    const plane = new THREE.Mesh(shapeGeometry(g.shape, size), new THREE.MeshStandardMaterial({
      color: 0xe0e0e0, roughness: 1, metalness: 0, side: THREE.DoubleSide, polygonOffset: true, polygonOffsetFactor: 1, polygonOffsetUnits: 1,
    }));
    const grid = new THREE.GridHelper(size, 40, 0x707070, 0x8c8c8c);
    grid.rotateX(Math.PI / 2);
    const holder = new THREE.Group();
    holder.add(plane, grid);
    holder.applyMatrix4(poseMatrix(g.p_BG, g.q_BG));
    const parent = g.body === null ? scene : groups[g.body];
    parent.add(holder);
    // Centre the square under the scene (in the plane's own frame).
    parent.updateMatrixWorld(true);
    const local = holder.worldToLocal(centre.clone());
    plane.position.set(local.x, local.y, 0);
    grid.position.set(local.x, local.y, 0);
  }

  // Targets (fixed) and markers (moving).
  const legend = document.getElementById('legend');
  const legendRow = (colour, text) => {
    const row = document.createElement('div');
    row.innerHTML = `<span class="swatch" style="background:${colour}"></span>`;
    row.append(text);
    legend.appendChild(row);
  };
  for (const t of header.targets) {
    const r = Math.max(t.radius, 0.01 * span);
    const m = new THREE.Mesh(new THREE.SphereGeometry(r, 24, 12), new THREE.MeshBasicMaterial({ color: 0x00aa00, wireframe: true }));
    m.position.set(...t.position);
    scene.add(m);
    legendRow('#00aa00', `target: ${t.label}`);
  }
  const markers = header.markers.map(mk => {
    // Drawn over the bodies: a measured position is usually a body origin, inside its body.
    const m = new THREE.Mesh(new THREE.SphereGeometry(0.012 * span, 12, 8), new THREE.MeshBasicMaterial({ color: mk.colour, depthTest: false }));
    m.renderOrder = 2;
    scene.add(m);
    legendRow(mk.colour, mk.label);
    return m;
  });
  if (header.bodies.length <= 12) {
    header.bodies.forEach(b => legendRow(b.colour, b.name));
  } else {
    legend.append(`${header.bodies.length} bodies (names in trajectory.csv)`);
  }
  if (header.force_scale > 0) {
    const div = document.createElement('div');
    div.textContent = `arrows: contact force on the second body; ${header.force_reference.toPrecision(3)} N = ${(header.force_scale * header.force_reference).toPrecision(2)} m`;
    legend.appendChild(div);
  }
  if (header.pressure_max > 0) {
    document.getElementById('colourbar').style.display = 'block';
    document.getElementById('pmax').textContent = `${header.pressure_max.toPrecision(3)} Pa`;
  }

  // Links: a segment from each jointed body's parent origin to its own.
  const links = header.bodies.map((b, i) => [b.parent, i]).filter(([p]) => p !== null && p !== undefined);
  const linkPositions = new Float32Array(Math.max(links.length, 1) * 6);
  const linkGeometry = new THREE.BufferGeometry();
  linkGeometry.setAttribute('position', new THREE.BufferAttribute(linkPositions, 3));
  linkGeometry.setDrawRange(0, 2 * links.length);
  const linkLines = new THREE.LineSegments(linkGeometry, new THREE.LineBasicMaterial({ color: 0x333333 }));
  linkLines.frustumCulled = false;
  scene.add(linkLines);

  // Contact arrows: shafts as line segments, heads as cones, points as dots.
  let maxArrows = 0;
  for (let f = 0; f + 1 < replay.contactOffsets.length; f++) {
    maxArrows = Math.max(maxArrows, replay.contactOffsets[f + 1] - replay.contactOffsets[f]);
  }
  const shaftPositions = new Float32Array(Math.max(maxArrows, 1) * 6);
  const shaftGeometry = new THREE.BufferGeometry();
  shaftGeometry.setAttribute('position', new THREE.BufferAttribute(shaftPositions, 3));
  // Drawn over the bodies: contact points lie on surfaces, often between two bodies.
  const shafts = new THREE.LineSegments(shaftGeometry, new THREE.LineBasicMaterial({ color: 0x111111, depthTest: false }));
  shafts.frustumCulled = false;
  const headLength = 0.015 * span;
  const heads = new THREE.InstancedMesh(new THREE.ConeGeometry(0.3 * headLength, headLength, 12).translate(0, -0.5 * headLength, 0),
    new THREE.MeshBasicMaterial({ color: 0x111111, depthTest: false }), Math.max(maxArrows, 1));
  const dots = new THREE.InstancedMesh(new THREE.SphereGeometry(0.003 * span, 8, 6),
    new THREE.MeshBasicMaterial({ color: 0xd62728, depthTest: false }), Math.max(maxArrows, 1));
  heads.frustumCulled = false;
  dots.frustumCulled = false;
  [shafts, heads, dots].forEach(o => { o.renderOrder = 2; });
  const forces = new THREE.Group();
  forces.add(shafts, heads, dots);
  scene.add(forces);

  // Pressure-field polygons: one triangle fan per polygon, coloured by its pressure.
  let maxTriangles = 0;
  for (let f = 0; f + 1 < replay.polygonOffsets.length; f++) {
    let n = 0;
    for (let p = replay.polygonOffsets[f]; p < replay.polygonOffsets[f + 1]; p++) {
      n += replay.vertexOffsets[p + 1] - replay.vertexOffsets[p] - 2;
    }
    maxTriangles = Math.max(maxTriangles, n);
  }
  const patchPositions = new Float32Array(Math.max(maxTriangles, 1) * 9);
  const patchColours = new Float32Array(Math.max(maxTriangles, 1) * 9);
  const patchGeometry = new THREE.BufferGeometry();
  patchGeometry.setAttribute('position', new THREE.BufferAttribute(patchPositions, 3));
  patchGeometry.setAttribute('color', new THREE.BufferAttribute(patchColours, 3));
  const patches = new THREE.Mesh(patchGeometry, new THREE.MeshBasicMaterial({
    vertexColors: true, side: THREE.DoubleSide, polygonOffset: true, polygonOffsetFactor: -2, polygonOffsetUnits: -2,
  }));
  patches.frustumCulled = false;
  scene.add(patches);

  // Camera: z up, looking at the scene's centre from the front (−y), a little from the right
  // and above; the orbit controls turn, zoom and pan it.
  const camera = new THREE.PerspectiveCamera(40, 1, span / 1000, span * 100);
  camera.up.set(0, 0, 1);
  const direction = new THREE.Vector3(0.35, -1, 0.45).normalize();
  const distance = 0.6 * span / Math.tan(THREE.MathUtils.degToRad(20));
  camera.position.copy(centre).addScaledVector(direction, distance);
  sun.position.copy(centre).add(new THREE.Vector3(0.5, -0.3, 1).multiplyScalar(distance));
  sun.target.position.copy(centre);
  scene.add(sun.target);
  const controls = new OrbitControls(camera, renderer.domElement);
  controls.target.copy(centre);
  controls.update();

  const t0 = replay.times[0];
  const t1 = replay.times[replay.times.length - 1];
  let t = Math.min(Math.max(Number(params.get('t') ?? t0) || t0, t0), t1);
  let playing = params.get('paused') !== '1';
  let speed = 1;
  const playButton = document.getElementById('play');
  const scrub = document.getElementById('scrub');
  const timeLabel = document.getElementById('time');
  const showContacts = document.getElementById('show-contacts');
  const showPatches = document.getElementById('show-patches');

  const position = new THREE.Vector3();
  const quaternion = new THREE.Quaternion();
  const matrix = new THREE.Matrix4();
  const colour = new THREE.Color();
  const up = new THREE.Vector3(0, 1, 0);

  function update() {
    groups.forEach((g, b) => {
      replay.pose(b, t, g.position, g.quaternion);
    });
    links.forEach(([p, c], k) => {
      const a = groups[p].position, b = groups[c].position;
      linkPositions.set([a.x, a.y, a.z, b.x, b.y, b.z], 6 * k);
    });
    linkGeometry.attributes.position.needsUpdate = true;
    const f = replay.contactFrame(t);
    const [c0, c1] = [replay.contactOffsets[f], replay.contactOffsets[f + 1]];
    const C = replay.contacts;
    let n = 0;
    for (let c = c0; c < c1; c++) {
      const k = 6 * c;
      const point = new THREE.Vector3(C[k], C[k + 1], C[k + 2]);
      const force = new THREE.Vector3(C[k + 3], C[k + 4], C[k + 5]);
      const length = Math.min(header.force_scale * force.length(), 0.35 * span);
      dots.setMatrixAt(n, matrix.makeTranslation(point));
      const tip = point.clone().addScaledVector(force.clone().normalize(), length);
      shaftPositions.set([point.x, point.y, point.z, tip.x, tip.y, tip.z], 6 * n);
      quaternion.setFromUnitVectors(up, force.lengthSq() > 0 ? force.clone().normalize() : up);
      const headScale = length > 0 ? Math.min(1, length / headLength) : 0;
      heads.setMatrixAt(n, matrix.compose(tip, quaternion, new THREE.Vector3(headScale, headScale, headScale)));
      n++;
    }
    shaftGeometry.setDrawRange(0, 2 * n);
    shaftGeometry.attributes.position.needsUpdate = true;
    heads.count = n;
    dots.count = n;
    heads.instanceMatrix.needsUpdate = true;
    dots.instanceMatrix.needsUpdate = true;
    forces.visible = showContacts.checked;

    let v = 0;
    const V = replay.vertices;
    for (let p = replay.polygonOffsets[f]; p < replay.polygonOffsets[f + 1]; p++) {
      pressureColour(replay.pressures[p], header.pressure_max, colour);
      const a = replay.vertexOffsets[p], b = replay.vertexOffsets[p + 1];
      for (let i = a + 1; i + 1 < b; i++) {
        for (const w of [a, i, i + 1]) {
          patchPositions.set([V[3 * w], V[3 * w + 1], V[3 * w + 2]], 3 * v);
          patchColours.set([colour.r, colour.g, colour.b], 3 * v);
          v++;
        }
      }
    }
    patchGeometry.setDrawRange(0, v);
    patchGeometry.attributes.position.needsUpdate = true;
    patchGeometry.attributes.color.needsUpdate = true;
    patches.visible = showPatches.checked;

    const M = replay.markerData;
    markers.forEach((m, i) => {
      const k = 3 * (f * markers.length + i);
      m.visible = Number.isFinite(M[k]);
      if (m.visible) m.position.set(M[k], M[k + 1], M[k + 2]);
    });

    scrub.value = String(Math.round(1000 * (t - t0) / Math.max(t1 - t0, 1e-12)));
    timeLabel.textContent = `t = ${t.toFixed(3)} s / ${t1.toFixed(3)} s`;
    playButton.textContent = playing ? 'Pause' : 'Play';
  }

  function resize() {
    const w = view.clientWidth, h = view.clientHeight;
    renderer.setSize(w, h);
    camera.aspect = w / Math.max(h, 1);
    camera.updateProjectionMatrix();
  }

  function render() {
    update();
    scene.updateMatrixWorld(true);
    renderer.render(scene, camera);
  }

  playButton.addEventListener('click', () => {
    if (!playing && t >= t1) t = t0;
    playing = !playing;
    render();
  });
  scrub.addEventListener('input', () => {
    playing = false;
    t = t0 + (t1 - t0) * Number(scrub.value) / 1000;
    render();
  });
  document.getElementById('speed').addEventListener('change', e => { speed = Number(e.target.value); });
  showContacts.addEventListener('change', render);
  showPatches.addEventListener('change', render);
  window.addEventListener('resize', () => { resize(); render(); });
  controls.addEventListener('change', render);

  let last = null;
  function frame(now) {
    if (playing && last !== null) {
      t += speed * (now - last) / 1000;
      if (t >= t1) { t = t1; playing = false; }
      render();
    }
    last = now;
    requestAnimationFrame(frame);
  }

  resize();
  render();
  requestAnimationFrame(frame);
  status.remove();

  window.stictionReplay = {
    header,
    time: () => t,
    // Shows time t (s), paused, and draws it.
    setTime(time) {
      playing = false;
      t = Math.min(Math.max(time, t0), t1);
      render();
      return t;
    },
    // The body's origin (m, world) at time t, as drawn.
    bodyPosition(name, time) {
      const b = replay.bodyIndex.get(name);
      if (b === undefined) throw new Error(`no body ${name}`);
      const p = new THREE.Vector3();
      replay.pose(b, time, p, new THREE.Quaternion());
      return [p.x, p.y, p.z];
    },
    // The point p (m, world) in canvas pixels from the top left: {x, y}.
    project(p) {
      const ndc = new THREE.Vector3(p[0], p[1], p[2]).project(camera);
      const rect = renderer.domElement.getBoundingClientRect();
      return { x: rect.left + (ndc.x + 1) / 2 * rect.width, y: rect.top + (1 - ndc.y) / 2 * rect.height };
    },
  };
}

main().catch(error => {
  status.textContent = `The replay could not be shown: ${error.message}`;
  console.error(error);
});
