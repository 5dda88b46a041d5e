// tumble viewer: plays a recording served by tumble.viz.viewer.server (see its docstring for the endpoints).
// Plain ES module, no build step; three.js comes from /vendor/ through the page's import map.
// Z is up; quaternions are (w, x, y, z) in the recording, (x, y, z, w) in three.js.

import * as THREE from 'three';
import { OrbitControls } from 'three/addons/controls/OrbitControls.js';

const GEOM_PLANE = 0, GEOM_SPHERE = 1, GEOM_CAPSULE = 2, GEOM_BOX = 3, GEOM_HULL = 4;
const FIXED_COLOR = new THREE.Color(0x8a919c);
const SELECTED_COLOR = new THREE.Color(0xffd400);
const SLEEPING_COLOR = new THREE.Color(0x4b5d80);
const BACKGROUND = 0x1d2129;
const GROUND_COLOR = 0xb9bec7;
// turbo-like ramp for colour by speed (same stops as the CSS legend)
const RAMP = ['#3b4cc0', '#4686fb', '#1ae4b6', '#a2fc3c', '#fabb39', '#e4460a', '#b0170a'].map((c) => new THREE.Color(c));

const $ = (id) => document.getElementById(id);

function glRendererName() {
  try {
    const gl = document.createElement('canvas').getContext('webgl2');
    if (!gl) return '';
    const ext = gl.getExtension('WEBGL_debug_renderer_info');
    const name = String(gl.getParameter(ext ? ext.UNMASKED_RENDERER_WEBGL : gl.RENDERER));
    const lose = gl.getExtension('WEBGL_lose_context');
    if (lose) lose.loseContext();
    return name;
  } catch (e) {
    return '';
  }
}

// page options from the query string: ?aa=0|1 (antialiasing), ?shadows=0, ?shadowmap=1024 (shadow map size).
// Software WebGL (SwiftShader, llvmpipe) defaults to no antialiasing, a smaller shadow map and pixel ratio 1.
const QUERY = new URLSearchParams(window.location.search);
const GL_NAME = glRendererName();
const SOFTWARE_GL = /swiftshader|llvmpipe|softpipe|software/i.test(GL_NAME);
const OPTIONS = {
  antialias: QUERY.has('aa') ? QUERY.get('aa') !== '0' : !SOFTWARE_GL,
  shadows: QUERY.get('shadows') !== '0',
  shadowMapSize: Math.max(256, Math.min(8192, Number(QUERY.get('shadowmap')) || (SOFTWARE_GL ? 1024 : 2048))),
  pixelRatio: SOFTWARE_GL ? 1 : Math.min(window.devicePixelRatio || 1, 2),
};

// ------------------------------------------------------------------------------------------ state
const state = {
  ready: false,
  error: null,
  frame: 0,
  playing: false,
  speed: 1,
  loop: true,
  playTime: 0, // seconds since frame 0, in recording time
  lastTick: null,
  selected: -1,
  colorMode: 'body',
  showContacts: false,
  highlightSleeping: false,
  hideSleeping: false,
  renderCount: 0,
  needsRender: true,
};

let rec = null; // recording.json
let F = 0, N = 0, G = 0;
let frames, velocities, sleeping, contacts;
let frameTime; // Float64Array, seconds since frame 0
let renderer, scene, camera, controls, raycaster;
let sun, groundGroup;
const groups = []; // {mesh, geoms: Int32Array, key}
let localMatrices; // Float32Array(G * 16): geom pose in its body frame, scale included
let geomBody; // Int32Array(G)
let geomGroup, geomInstance; // Int32Array(G): group index and instance index of each geom (-1: plane)
let bodyGeoms; // Array<number[]>
let bodyRadius; // Float32Array(N): bounding radius about the centre of mass
let bodyColors; // Float32Array(N * 3), linear RGB, colour by body
let hiddenBody; // Uint8Array(N): not drawn in the current frame
let maxSpeed = 1;
let contactPoints, contactNormals, normalLength = 0.05;
let selectionBox;
let framing = { center: new THREE.Vector3(), radius: 1 };
let elasticFrames = new Float32Array(0);
const elasticMeshes = [];

// the test hook (tests/viz/test_viewer.py)
window.tumbleViewer = {
  get ready() { return state.ready; },
  get error() { return state.error; },
  get frame() { return state.frame; },
  get frameCount() { return F; },
  get bodyCount() { return N; },
  get playing() { return state.playing; },
  get selected() { return state.selected; },
  get speed() { return state.speed; },
  get renderCount() { return state.renderCount; },
  get glRenderer() { return GL_NAME; },
  get options() { return { ...OPTIONS, software: SOFTWARE_GL }; },
  get settings() { return rec && rec.meta ? rec.meta.settings : null; }, // non-finite values as numbers
  settingsShown: () => !$('settings').hidden,
  play: () => state.ready && setPlaying(true),
  pause: () => state.ready && setPlaying(false),
  setFrame: (f) => { if (state.ready) { setPlaying(false); setFrame(f); } },
  select: (id) => state.ready && select(id),
  bodyPosition: (id) => (state.ready ? bodyPosition(id, state.frame) : null),
  bodyAlive: (id) => (state.ready ? isAlive(id, state.frame) : null), // spawned and not removed now
  elasticCount: () => elasticMeshes.length,
  // the drawn vertex positions of elastic body e now (flat [x, y, z, ...])
  elasticVertices: (e) => (state.ready ? Array.from(elasticMeshes[e].mesh.geometry.getAttribute('position').array)
    : null),
  bodyScreenPosition: (id) => (state.ready ? bodyScreenPosition(id) : null), // [x, y] CSS pixels in the page
  screenToBody: (x, y) => (state.ready ? pick(x, y) : -1), // body id under CSS pixel (x, y), -1 for none
  // resolves (with renderCount) once everything changed so far is drawn
  rendered: () => new Promise((resolve) => {
    const check = () => (state.needsRender || !state.ready ? requestAnimationFrame(check) : resolve(state.renderCount));
    requestAnimationFrame(check);
  }),
};

// ------------------------------------------------------------------------------------------ loading
async function fetchOk(url, kind) {
  const r = await fetch(url);
  if (!r.ok) throw new Error(`GET ${url}: HTTP ${r.status}`);
  return kind === 'json' ? r.json() : r.arrayBuffer();
}

// recording.json is strict JSON (tumble.recording.strict_json): a non-finite float (a setting such as the
// shock solver's max_correction = inf) arrives as the string 'inf', '-inf' or 'nan', and rec.nonfinite
// lists the key path of each. decodeNonfinite turns them back into numbers (Infinity, -Infinity, NaN);
// valueText shows them as inf, -inf and nan.
const NONFINITE = { inf: Infinity, '-inf': -Infinity, nan: NaN };

function decodeNonfinite(doc) {
  for (const path of Array.isArray(doc.nonfinite) ? doc.nonfinite : []) {
    if (!Array.isArray(path) || path.length === 0) continue;
    let node = doc;
    for (const key of path.slice(0, -1)) node = node == null ? undefined : node[key];
    const last = path[path.length - 1];
    if (node != null && typeof node === 'object' && Object.prototype.hasOwnProperty.call(NONFINITE, node[last])) {
      node[last] = NONFINITE[node[last]];
    }
  }
  return doc;
}

function valueText(v) {
  if (typeof v === 'number') {
    if (Number.isNaN(v)) return 'nan';
    if (!Number.isFinite(v)) return v > 0 ? 'inf' : '-inf';
    return String(v);
  }
  if (v === null || v === undefined) return '–';
  if (typeof v === 'object') return JSON.stringify(v, (k, x) => (typeof x === 'number' ? valueText(x) : x));
  return String(v);
}

async function load() {
  rec = decodeNonfinite(await fetchOk('/recording.json', 'json'));
  const bin = rec.binary;
  const [fb, vb, sb, cb] = await Promise.all([
    fetchOk(bin.frames.url), fetchOk(bin.velocities.url), fetchOk(bin.sleeping.url), fetchOk(bin.contacts.url),
  ]);
  F = rec.frame_count; N = rec.body_count; G = rec.geoms.length;
  frames = new Float32Array(fb);
  velocities = new Float32Array(vb);
  sleeping = new Uint8Array(sb);
  if (frames.length !== F * N * 7 || velocities.length !== F * N * 6 || sleeping.length !== F * N) {
    throw new Error('binary payloads do not match recording.json');
  }
  const s = bin.contacts.sections;
  const view = (key, Type, n) => new Type(cb, s[key].offset, n);
  const C = rec.contact_total;
  contacts = {
    start: view('start', Int32Array, F), count: view('count', Int32Array, F), body: view('body', Int32Array, C * 2),
    point: view('point', Float32Array, C * 3), normal: view('normal', Float32Array, C * 3),
    depth: view('depth', Float32Array, C), impulse: view('impulse', Float32Array, C),
  };
  const t0 = rec.frame_time[0];
  frameTime = Float64Array.from(rec.frame_time, (t) => t - t0);
  // elastic bodies: vertex positions (F, EV, 3) float32; absent for recordings without them
  const EV = rec.elastic_vertex_total || 0;
  elasticFrames = (rec.elastic || []).length ? new Float32Array(await fetchOk(bin.elastic.url)) : new Float32Array(0);
  if (elasticFrames.length !== F * EV * 3) throw new Error('elastic payload does not match recording.json');
}

// one dynamic BufferGeometry per elastic body, its positions rewritten every frame (applyElastic)
function buildElastic() {
  const bodies = rec.elastic || [];
  const c = new THREE.Color();
  bodies.forEach((e, i) => {
    const g = new THREE.BufferGeometry();
    const pos = new THREE.Float32BufferAttribute(new Float32Array(3 * e.vertex_count), 3);
    pos.setUsage(THREE.DynamicDrawUsage);
    g.setAttribute('position', pos);
    g.setIndex(e.triangles.flat());
    c.setHSL((0.13 + 0.61803 * (N + i)) % 1, 0.65, 0.55);
    const material = new THREE.MeshStandardMaterial({ color: c.getHex(), roughness: 0.5, metalness: 0.0,
      flatShading: true });
    const mesh = new THREE.Mesh(g, material);
    mesh.castShadow = true;
    mesh.receiveShadow = true;
    mesh.frustumCulled = false; // it deforms every frame
    elasticMeshes.push({ mesh, start: e.vertex_start, count: e.vertex_count });
    scene.add(mesh);
  });
}

function applyElastic() {
  const f = state.frame;
  const EV = rec.elastic_vertex_total || 0;
  for (const e of elasticMeshes) {
    const pos = e.mesh.geometry.getAttribute('position');
    const o = (f * EV + e.start) * 3;
    pos.array.set(elasticFrames.subarray(o, o + 3 * e.count));
    pos.needsUpdate = true;
    e.mesh.geometry.computeVertexNormals();
    e.mesh.geometry.computeBoundingSphere();
  }
}

// ------------------------------------------------------------------------------------------ geometry
function composeInto(out, o, p, q, s) {
  // column-major 4x4 of translation p, rotation q = [w, x, y, z], scale s, written at out[o..o+15]
  const [w, x, y, z] = q;
  const x2 = x + x, y2 = y + y, z2 = z + z;
  const xx = x * x2, xy = x * y2, xz = x * z2, yy = y * y2, yz = y * z2, zz = z * z2;
  const wx = w * x2, wy = w * y2, wz = w * z2;
  out[o] = (1 - (yy + zz)) * s[0]; out[o + 1] = (xy + wz) * s[0]; out[o + 2] = (xz - wy) * s[0]; out[o + 3] = 0;
  out[o + 4] = (xy - wz) * s[1]; out[o + 5] = (1 - (xx + zz)) * s[1]; out[o + 6] = (yz + wx) * s[1]; out[o + 7] = 0;
  out[o + 8] = (xz + wy) * s[2]; out[o + 9] = (yz - wx) * s[2]; out[o + 10] = (1 - (xx + yy)) * s[2]; out[o + 11] = 0;
  out[o + 12] = p[0]; out[o + 13] = p[1]; out[o + 14] = p[2]; out[o + 15] = 1;
}

function hullGeometry(h) {
  const hull = rec.hulls[h];
  const g = new THREE.BufferGeometry();
  g.setAttribute('position', new THREE.Float32BufferAttribute(hull.vertices.flat(), 3));
  g.setIndex(hull.triangles.flat());
  const flat = g.toNonIndexed(); // flat shading: one normal per face
  flat.computeVertexNormals();
  g.dispose();
  return flat;
}

function geomKind(g, detail) {
  // [group key, base geometry factory, instance scale]; detail 0..2 thins the tessellation of many bodies
  const geom = rec.geoms[g];
  const [a, b, c] = geom.size;
  const seg = [[12, 8, 4], [20, 12, 6], [32, 16, 8]][detail];
  switch (geom.type) {
    case GEOM_SPHERE: return ['sphere', () => new THREE.SphereGeometry(1, seg[0], seg[1]), [a, a, a]];
    case GEOM_BOX: return ['box', () => new THREE.BoxGeometry(2, 2, 2), [a, b, c]];
    case GEOM_CAPSULE: {
      const make = () => new THREE.CapsuleGeometry(a, 2 * b, seg[2], seg[0], 1).rotateX(Math.PI / 2); // along z
      return [`capsule:${a}:${b}`, make, [1, 1, 1]];
    }
    case GEOM_HULL: return [`hull:${geom.hull}`, () => hullGeometry(geom.hull), [1, 1, 1]];
    default: return null;
  }
}

function geomRadius(g) {
  const geom = rec.geoms[g];
  const [a, b, c] = geom.size;
  let r;
  switch (geom.type) {
    case GEOM_SPHERE: r = a; break;
    case GEOM_BOX: r = Math.hypot(a, b, c); break;
    case GEOM_CAPSULE: r = a + b; break;
    case GEOM_HULL: r = Math.max(0, ...rec.hulls[geom.hull].vertices.map((v) => Math.hypot(...v))); break;
    default: r = 0;
  }
  return r + Math.hypot(...geom.position);
}

function bodyColor(b, out) {
  if (rec.bodies[b].fixed) return out.copy(FIXED_COLOR);
  // golden-ratio hues, skipping the yellows of the selection highlight
  let h = ((b * 0.618033988749895 + 0.2) % 1) * 0.86;
  if (h > 0.08) h += 0.14;
  return out.setHSL(h, 0.6, 0.55);
}

function buildScene() {
  const container = $('viewport');
  renderer = new THREE.WebGLRenderer({ antialias: OPTIONS.antialias });
  renderer.setPixelRatio(OPTIONS.pixelRatio);
  renderer.setSize(container.clientWidth, container.clientHeight);
  renderer.shadowMap.enabled = OPTIONS.shadows;
  renderer.shadowMap.type = THREE.PCFShadowMap;
  container.appendChild(renderer.domElement);

  scene = new THREE.Scene();
  scene.background = new THREE.Color(BACKGROUND);

  geomBody = Int32Array.from(rec.geoms, (g) => g.body);
  geomGroup = new Int32Array(G).fill(-1);
  geomInstance = new Int32Array(G).fill(-1);
  bodyGeoms = Array.from({ length: N }, () => []);
  localMatrices = new Float32Array(G * 16);
  bodyRadius = new Float32Array(N);
  hiddenBody = new Uint8Array(N);
  bodyColors = new Float32Array(N * 3);
  const c = new THREE.Color();
  for (let b = 0; b < N; b++) bodyColor(b, c).toArray(bodyColors, 3 * b);

  // group the geoms by shape kind: one InstancedMesh per kind (per size for capsules, per hull for hulls)
  const byKey = new Map();
  const round = rec.geoms.filter((x) => x.type === GEOM_SPHERE || x.type === GEOM_CAPSULE).length;
  const detail = round > 2000 ? 0 : round > 300 ? 1 : 2;
  for (let g = 0; g < G; g++) {
    const geom = rec.geoms[g];
    bodyGeoms[geom.body].push(g);
    if (geom.type === GEOM_PLANE) continue;
    bodyRadius[geom.body] = Math.max(bodyRadius[geom.body], geomRadius(g));
    const [key, make, scale] = geomKind(g, detail);
    composeInto(localMatrices, 16 * g, geom.position, geom.orientation, scale);
    if (!byKey.has(key)) byKey.set(key, { key, make, geoms: [] });
    byKey.get(key).geoms.push(g);
  }
  for (const entry of byKey.values()) {
    const material = new THREE.MeshStandardMaterial({ color: 0xffffff, roughness: 0.6, metalness: 0.0 });
    const mesh = new THREE.InstancedMesh(entry.make(), material, entry.geoms.length);
    mesh.instanceMatrix.setUsage(THREE.DynamicDrawUsage);
    mesh.castShadow = true;
    mesh.receiveShadow = true;
    mesh.frustumCulled = false; // instances move every frame
    entry.geoms.forEach((g, i) => { geomGroup[g] = groups.length; geomInstance[g] = i; mesh.setColorAt(i, c); });
    mesh.instanceColor.setUsage(THREE.DynamicDrawUsage);
    mesh.userData.group = groups.length;
    groups.push({ key: entry.key, mesh, geoms: Int32Array.from(entry.geoms) });
    scene.add(mesh);
  }

  buildElastic();
  computeFraming();
  buildGround();
  buildLights();
  buildContacts();

  selectionBox = new THREE.Box3Helper(new THREE.Box3(), SELECTED_COLOR);
  selectionBox.visible = false;
  selectionBox.material.depthTest = false;
  selectionBox.renderOrder = 9;
  scene.add(selectionBox);

  const aspect = container.clientWidth / Math.max(1, container.clientHeight);
  camera = new THREE.PerspectiveCamera(40, aspect, framing.radius / 200, framing.radius * 200);
  camera.up.set(0, 0, 1); // Z up (before OrbitControls reads it)
  controls = new OrbitControls(camera, renderer.domElement);
  controls.enableDamping = false;
  controls.addEventListener('change', () => { state.needsRender = true; });
  frameCamera();

  raycaster = new THREE.Raycaster();
  new ResizeObserver(onResize).observe(container);
}

function computeFraming() {
  // bounding box of the dynamic bodies alive in the first and the last frame (fixed bodies if none)
  const box = new THREE.Box3();
  const p = new THREE.Vector3();
  const addBodies = (dynamicOnly) => {
    for (const f of new Set([0, F - 1])) {
      for (let b = 0; b < rec.frame_body_count[f]; b++) {
        if (!isAlive(b, f)) continue;
        if (dynamicOnly === rec.bodies[b].fixed) continue;
        if (!dynamicOnly && bodyGeoms[b].every((g) => rec.geoms[g].type === GEOM_PLANE)) continue;
        const o = (f * N + b) * 7;
        p.set(frames[o], frames[o + 1], frames[o + 2]);
        const r = bodyRadius[b];
        box.expandByPoint(p.clone().addScalar(r));
        box.expandByPoint(p.clone().addScalar(-r));
      }
    }
  };
  addBodies(true);
  const EV = rec.elastic_vertex_total || 0;
  for (const f of new Set([0, F - 1])) {
    for (let v = 0; v < EV; v++) {
      const o = (f * EV + v) * 3;
      box.expandByPoint(p.set(elasticFrames[o], elasticFrames[o + 1], elasticFrames[o + 2]));
    }
  }
  if (box.isEmpty()) addBodies(false);
  if (box.isEmpty()) box.set(new THREE.Vector3(-1, -1, 0), new THREE.Vector3(1, 1, 1));
  box.getCenter(framing.center);
  framing.radius = Math.max(0.5 * box.getSize(p).length(), 0.1);
  framing.box = box;
  const radii = [];
  for (let b = 0; b < N; b++) if (!rec.bodies[b].fixed && bodyRadius[b] > 0) radii.push(bodyRadius[b]);
  radii.sort((a, b) => a - b);
  const typical = radii.length ? radii[radii.length >> 1] : framing.radius / 10;
  normalLength = 0.6 * typical;
  let vmax = 0;
  for (let f = 0; f < F; f++) {
    for (let b = 0; b < rec.frame_body_count[f]; b++) {
      if (rec.bodies[b].fixed || !isAlive(b, f)) continue;
      const o = (f * N + b) * 6;
      vmax = Math.max(vmax, Math.hypot(velocities[o], velocities[o + 1], velocities[o + 2]));
    }
  }
  maxSpeed = vmax > 1e-9 ? vmax : 1;
  $('legend-max').textContent = `${fmt(maxSpeed, 3)} m/s`;
}

function niceStep(x) {
  const e = Math.pow(10, Math.floor(Math.log10(x)));
  const m = x / e;
  return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * e;
}

function buildGround() {
  groundGroup = new THREE.Group();
  scene.add(groundGroup);
  const size = Math.max(4, framing.radius * 14);
  const step = niceStep(framing.radius / 4);
  const divisions = Math.min(200, Math.max(2, 2 * Math.round((framing.radius * 4) / step)));
  const gridSize = divisions * step;
  const makeGrid = () => {
    const grid = new THREE.GridHelper(gridSize, divisions, 0x6b7280, 0x8d939d);
    grid.rotation.x = Math.PI / 2; // GridHelper lies in XZ; the ground is XY
    grid.position.z = framing.radius * 1e-3;
    grid.material.transparent = true;
    grid.material.opacity = 0.55;
    return grid;
  };
  const q = new THREE.Quaternion(), p = new THREE.Vector3(), m = new THREE.Matrix4(), local = new THREE.Matrix4();
  let planes = 0;
  for (let g = 0; g < G; g++) {
    const geom = rec.geoms[g];
    if (geom.type !== GEOM_PLANE) continue;
    planes++;
    const b = geom.body;
    const o = b * 7; // frame 0: planes belong to fixed bodies
    m.compose(p.set(frames[o], frames[o + 1], frames[o + 2]),
      q.set(frames[o + 4], frames[o + 5], frames[o + 6], frames[o + 3]), new THREE.Vector3(1, 1, 1));
    const [w, x, y, z] = geom.orientation;
    local.compose(new THREE.Vector3(...geom.position), new THREE.Quaternion(x, y, z, w), new THREE.Vector3(1, 1, 1));
    m.multiply(local);
    const plane = new THREE.Mesh(new THREE.PlaneGeometry(size, size),
      new THREE.MeshStandardMaterial({ color: GROUND_COLOR, roughness: 0.95, metalness: 0 }));
    plane.receiveShadow = true;
    plane.userData.body = b;
    // centre the finite plane under the scene: project the framing centre onto it
    const inv = m.clone().invert();
    const c = framing.center.clone().applyMatrix4(inv);
    local.makeTranslation(c.x, c.y, 0);
    plane.matrixAutoUpdate = false;
    plane.matrix.copy(m).multiply(local);
    plane.add(makeGrid());
    groundGroup.add(plane);
  }
  if (planes === 0) { // no ground plane: a grid under the scene
    const grid = makeGrid();
    grid.position.set(framing.center.x, framing.center.y, framing.box.min.z);
    groundGroup.add(grid);
  }
}

function buildLights() {
  const hemi = new THREE.HemisphereLight(0xdfe8ff, 0x4a4438, 1.4);
  hemi.position.set(0, 0, 1);
  scene.add(hemi);
  const r = framing.radius;
  sun = new THREE.DirectionalLight(0xffffff, 2.2);
  sun.position.copy(framing.center).add(new THREE.Vector3(-0.55, -0.3, 1.0).normalize().multiplyScalar(4 * r));
  sun.target.position.copy(framing.center);
  sun.castShadow = true;
  sun.shadow.mapSize.set(OPTIONS.shadowMapSize, OPTIONS.shadowMapSize);
  const cam = sun.shadow.camera;
  cam.left = -1.6 * r; cam.right = 1.6 * r; cam.top = 1.6 * r; cam.bottom = -1.6 * r;
  cam.near = 0.05 * r; cam.far = 10 * r;
  cam.updateProjectionMatrix();
  sun.shadow.bias = -0.0005;
  sun.shadow.normalBias = 0.01 * r / 2;
  scene.add(sun, sun.target);
}

function buildContacts() {
  let most = 1;
  for (let f = 0; f < F; f++) most = Math.max(most, contacts.count[f]);
  const pg = new THREE.BufferGeometry();
  pg.setAttribute('position', new THREE.BufferAttribute(new Float32Array(most * 3), 3).setUsage(THREE.DynamicDrawUsage));
  contactPoints = new THREE.Points(pg, new THREE.PointsMaterial({
    color: 0xff3b30, size: 6, sizeAttenuation: false, depthTest: false, transparent: true,
  }));
  const ng = new THREE.BufferGeometry();
  ng.setAttribute('position', new THREE.BufferAttribute(new Float32Array(most * 6), 3).setUsage(THREE.DynamicDrawUsage));
  contactNormals = new THREE.LineSegments(ng, new THREE.LineBasicMaterial({
    color: 0x00d0ff, depthTest: false, transparent: true,
  }));
  for (const o of [contactPoints, contactNormals]) {
    o.frustumCulled = false;
    o.renderOrder = 10;
    o.visible = false;
    scene.add(o);
  }
}

function frameCamera() {
  const fov = THREE.MathUtils.degToRad(camera.fov);
  const fit = Math.min(fov, 2 * Math.atan(Math.tan(fov / 2) * camera.aspect));
  const dist = 0.8 * framing.radius / Math.sin(fit / 2);
  const dir = new THREE.Vector3(0.85, -1.5, 0.8).normalize();
  camera.position.copy(framing.center).addScaledVector(dir, dist);
  controls.target.copy(framing.center);
  camera.near = dist / 100;
  camera.far = dist * 100;
  camera.updateProjectionMatrix();
  controls.update();
  state.needsRender = true;
}

function onResize() {
  const el = $('viewport');
  const w = el.clientWidth, h = Math.max(1, el.clientHeight);
  renderer.setSize(w, h);
  camera.aspect = w / h;
  camera.updateProjectionMatrix();
  state.needsRender = true;
}

// ------------------------------------------------------------------------------------------ per frame
// body b is in the world in frame f: spawned, and not removed (World.remove_body) before the frame's step
function isAlive(b, f) {
  if (b >= rec.frame_body_count[f]) return false;
  const gone = rec.bodies[b].removed_step;
  return gone === undefined || gone < 0 || rec.frame_step[f] < gone;
}

function bodyPosition(b, f) {
  if (b < 0 || b >= N) return null;
  const o = (f * N + b) * 7;
  return [frames[o], frames[o + 1], frames[o + 2]];
}

function applyFrame() {
  const f = state.frame;
  for (let b = 0; b < N; b++) {
    hiddenBody[b] = !isAlive(b, f) || (state.hideSleeping && sleeping[f * N + b] && b !== state.selected) ? 1 : 0;
  }
  const B = new Float32Array(16);
  const one = [1, 1, 1];
  for (const grp of groups) {
    const out = grp.mesh.instanceMatrix.array;
    const gs = grp.geoms;
    for (let i = 0; i < gs.length; i++) {
      const g = gs[i], b = geomBody[g], o = 16 * i;
      if (hiddenBody[b]) { out.fill(0, o, o + 16); continue; }
      const s = (f * N + b) * 7;
      composeInto(B, 0, [frames[s], frames[s + 1], frames[s + 2]],
        [frames[s + 3], frames[s + 4], frames[s + 5], frames[s + 6]], one);
      const L = localMatrices, l = 16 * g;
      for (let col = 0; col < 4; col++) {
        const l0 = L[l + 4 * col], l1 = L[l + 4 * col + 1], l2 = L[l + 4 * col + 2], l3 = L[l + 4 * col + 3];
        for (let row = 0; row < 4; row++) {
          out[o + 4 * col + row] = B[row] * l0 + B[4 + row] * l1 + B[8 + row] * l2 + B[12 + row] * l3;
        }
      }
    }
    grp.mesh.instanceMatrix.needsUpdate = true;
    grp.mesh.boundingSphere = null; // recomputed on demand (raycasting)
    grp.mesh.boundingBox = null;
  }
  applyElastic();
  applyColors();
  applyContacts();
  updateSelectionBox();
  updateReadout();
  updateInfo();
  state.needsRender = true;
}

const tmpColor = new THREE.Color();
function rampColor(t, out) {
  t = Math.min(1, Math.max(0, t)) * (RAMP.length - 1);
  const i = Math.min(RAMP.length - 2, Math.floor(t));
  return out.lerpColors(RAMP[i], RAMP[i + 1], t - i);
}

function applyColors() {
  const f = state.frame;
  for (const grp of groups) {
    const out = grp.mesh.instanceColor.array;
    const gs = grp.geoms;
    for (let i = 0; i < gs.length; i++) {
      const b = geomBody[gs[i]];
      let c;
      if (b === state.selected) c = SELECTED_COLOR;
      else if (state.highlightSleeping && sleeping[f * N + b]) c = SLEEPING_COLOR;
      else if (state.colorMode === 'speed' && !rec.bodies[b].fixed) {
        const o = (f * N + b) * 6;
        c = rampColor(Math.hypot(velocities[o], velocities[o + 1], velocities[o + 2]) / maxSpeed, tmpColor);
      } else {
        out[3 * i] = bodyColors[3 * b]; out[3 * i + 1] = bodyColors[3 * b + 1]; out[3 * i + 2] = bodyColors[3 * b + 2];
        continue;
      }
      out[3 * i] = c.r; out[3 * i + 1] = c.g; out[3 * i + 2] = c.b;
    }
    grp.mesh.instanceColor.needsUpdate = true;
  }
}

function applyContacts() {
  const f = state.frame, n = contacts.count[f], s = contacts.start[f];
  $('contact-label').textContent = `${n} contact point${n === 1 ? '' : 's'}`;
  contactPoints.visible = contactNormals.visible = state.showContacts && n > 0;
  if (!contactPoints.visible) return;
  const pa = contactPoints.geometry.attributes.position, na = contactNormals.geometry.attributes.position;
  const P = contacts.point, Nn = contacts.normal;
  for (let k = 0; k < n; k++) {
    const i = 3 * (s + k);
    pa.array[3 * k] = P[i]; pa.array[3 * k + 1] = P[i + 1]; pa.array[3 * k + 2] = P[i + 2];
    na.array[6 * k] = P[i]; na.array[6 * k + 1] = P[i + 1]; na.array[6 * k + 2] = P[i + 2];
    na.array[6 * k + 3] = P[i] + normalLength * Nn[i];
    na.array[6 * k + 4] = P[i + 1] + normalLength * Nn[i + 1];
    na.array[6 * k + 5] = P[i + 2] + normalLength * Nn[i + 2];
  }
  contactPoints.geometry.setDrawRange(0, n);
  contactNormals.geometry.setDrawRange(0, 2 * n);
  pa.needsUpdate = true;
  na.needsUpdate = true;
}

const tmpBox = new THREE.Box3(), tmpMatrix = new THREE.Matrix4();
function updateSelectionBox() {
  const b = state.selected;
  selectionBox.visible = false;
  if (b < 0 || hiddenBody[b]) return;
  const box = selectionBox.box.makeEmpty();
  for (const g of bodyGeoms[b]) {
    const gi = geomGroup[g];
    if (gi < 0) continue;
    const mesh = groups[gi].mesh;
    if (!mesh.geometry.boundingBox) mesh.geometry.computeBoundingBox();
    mesh.getMatrixAt(geomInstance[g], tmpMatrix);
    box.union(tmpBox.copy(mesh.geometry.boundingBox).applyMatrix4(tmpMatrix));
  }
  selectionBox.visible = !box.isEmpty();
}

function updateReadout() {
  const f = state.frame;
  $('frame-label').textContent = `frame ${f} / ${F - 1} · t = ${rec.frame_time[f].toFixed(3)} s · step ${rec.frame_step[f]}`;
  $('frame-label').dataset.frame = String(f);
  const tl = $('timeline');
  if (Number(tl.value) !== f) tl.value = String(f);
}

function fmt(x, digits = 4) {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  const a = Math.abs(x);
  if (a >= 1e5 || a < 1e-3) return x.toExponential(digits - 1);
  return String(Number(x.toPrecision(digits)));
}

const vec = (v, unit) => `(${v.map((x) => fmt(x, 3)).join(', ')}) ${unit}`;

function updateInfo() {
  const panel = $('info');
  const b = state.selected;
  if (b < 0) { panel.hidden = true; return; }
  panel.hidden = false;
  const f = state.frame, body = rec.bodies[b];
  const o = (f * N + b) * 7, ov = (f * N + b) * 6;
  const v = [velocities[ov], velocities[ov + 1], velocities[ov + 2]];
  const w = [velocities[ov + 3], velocities[ov + 4], velocities[ov + 5]];
  $('info-id').textContent = String(b);
  $('info-name').textContent = body.name ? `“${body.name}”` : '';
  $('info-mass').textContent = body.fixed ? 'fixed (0 kg)' : `${fmt(body.mass, 6)} kg`;
  $('info-mass').dataset.value = String(body.mass);
  $('info-material').textContent = body.material || '–';
  const alive = isAlive(b, f);
  $('info-state').textContent = !alive ? (b < rec.frame_body_count[f] ? 'removed' : 'not spawned yet') : body.fixed ? 'fixed'
    : sleeping[f * N + b] ? 'sleeping' : 'awake';
  $('info-position').textContent = vec([frames[o], frames[o + 1], frames[o + 2]], 'm');
  $('info-speed').textContent = `${fmt(Math.hypot(...v), 4)} m/s`;
  $('info-velocity').textContent = vec(v, 'm/s');
  $('info-angular').textContent = `${vec(w, 'rad/s')} · |ω| ${fmt(Math.hypot(...w), 3)}`;

  const s = contacts.start[f], n = contacts.count[f];
  const per = new Map();
  let points = 0;
  for (let k = s; k < s + n; k++) {
    const a = contacts.body[2 * k], c = contacts.body[2 * k + 1];
    if (a !== b && c !== b) continue;
    const other = a === b ? c : a;
    const e = per.get(other) || { points: 0, impulse: 0, depth: 0 };
    e.points++; e.impulse += contacts.impulse[k]; e.depth = Math.max(e.depth, contacts.depth[k]);
    per.set(other, e);
    points++;
  }
  $('info-contact-count').textContent = `(frame ${f}): ${points} point${points === 1 ? '' : 's'}, ${per.size} bod${per.size === 1 ? 'y' : 'ies'}`;
  $('info-contact-count').dataset.value = String(points);
  const rows = [...per.entries()].sort((x, y) => x[0] - y[0]).slice(0, 64).map(([other, e]) => {
    const name = other >= 0 && rec.bodies[other].name ? ` <span class="muted">${escapeHtml(rec.bodies[other].name)}</span>` : '';
    const label = other < 0 ? 'world' : `<a data-body="${other}">${other}</a>${name}`;
    return `<tr data-other="${other}"><td>${label}</td><td>${e.points}</td><td>${fmt(e.impulse, 4)}</td><td>${fmt(1000 * e.depth, 3)}</td></tr>`;
  });
  $('info-contacts').tBodies[0].innerHTML = rows.join('');
}

function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' }[ch]));
}

// ------------------------------------------------------------------------------------------ interaction
function setFrame(f) {
  f = Math.max(0, Math.min(F - 1, Math.round(Number(f) || 0)));
  state.playTime = frameTime[f];
  if (f === state.frame && state.ready) return;
  state.frame = f;
  applyFrame();
}

function setPlaying(on) {
  if (on && !state.playing && F > 1 && state.frame >= F - 1) { state.frame = -1; setFrame(0); }
  state.playing = on && F > 1;
  state.lastTick = null;
  const btn = $('play');
  btn.dataset.state = state.playing ? 'playing' : 'paused';
  btn.textContent = state.playing ? '❚❚ pause' : '▶ play';
}

function select(b) {
  b = Number(b);
  state.selected = Number.isInteger(b) && b >= 0 && b < N ? b : -1;
  applyFrame();
}

function clientToNdc(x, y) {
  const r = renderer.domElement.getBoundingClientRect();
  return new THREE.Vector2(((x - r.left) / r.width) * 2 - 1, -((y - r.top) / r.height) * 2 + 1);
}

function pick(x, y) {
  // the body under CSS pixel (x, y), -1 for none
  raycaster.setFromCamera(clientToNdc(x, y), camera);
  const hits = raycaster.intersectObjects(groups.map((g) => g.mesh), false);
  for (const h of hits) {
    if (h.instanceId === undefined) continue;
    const g = groups[h.object.userData.group].geoms[h.instanceId];
    const b = geomBody[g];
    if (!hiddenBody[b]) return b;
  }
  return -1;
}

function bodyScreenPosition(b) {
  const p = bodyPosition(b, state.frame);
  if (!p) return null;
  camera.updateMatrixWorld();
  const v = new THREE.Vector3(...p).project(camera);
  if (v.z > 1 || v.z < -1) return null;
  const r = renderer.domElement.getBoundingClientRect();
  return [r.left + ((v.x + 1) / 2) * r.width, r.top + ((1 - v.y) / 2) * r.height];
}

// ------------------------------------------------------------------------------------------ settings panel
function buildSettings() {
  const m = rec.meta || {};
  $('settings-solver').textContent = valueText(m.solver);
  const settings = m.settings && typeof m.settings === 'object' ? m.settings : {};
  const body = $('settings-table').querySelector('tbody');
  body.replaceChildren();
  for (const [key, v] of Object.entries(settings)) {
    const tr = document.createElement('tr');
    const th = document.createElement('th');
    th.scope = 'row';
    th.textContent = key;
    const td = document.createElement('td');
    td.dataset.key = key;
    td.textContent = valueText(v);
    if (typeof v === 'number' && !Number.isFinite(v)) {
      td.classList.add('nonfinite');
      td.title = 'not a finite number (sent as the string "' + valueText(v) + '" in strict JSON)';
    }
    tr.append(th, td);
    body.append(tr);
  }
}

function showSettings(on) {
  $('settings').hidden = !on;
  $('toggle-settings').setAttribute('aria-pressed', on ? 'true' : 'false');
}

function bindControls() {
  $('toggle-settings').addEventListener('click', () => showSettings($('settings').hidden));
  $('settings-close').addEventListener('click', () => showSettings(false));
  $('play').addEventListener('click', () => setPlaying(!state.playing));
  $('step-back').addEventListener('click', () => { setPlaying(false); setFrame(state.frame - 1); });
  $('step-forward').addEventListener('click', () => { setPlaying(false); setFrame(state.frame + 1); });
  const tl = $('timeline');
  tl.max = String(F - 1);
  tl.addEventListener('input', () => setFrame(Number(tl.value)));
  $('speed').addEventListener('change', (e) => { state.speed = Number(e.target.value); });
  $('color-mode').addEventListener('change', (e) => {
    state.colorMode = e.target.value;
    $('legend').hidden = state.colorMode !== 'speed';
    applyFrame();
  });
  $('toggle-loop').addEventListener('change', (e) => { state.loop = e.target.checked; });
  $('toggle-contacts').addEventListener('change', (e) => { state.showContacts = e.target.checked; applyFrame(); });
  $('toggle-sleeping').addEventListener('change', (e) => { state.highlightSleeping = e.target.checked; applyFrame(); });
  $('hide-sleeping').addEventListener('change', (e) => { state.hideSleeping = e.target.checked; applyFrame(); });
  $('toggle-shadows').checked = OPTIONS.shadows;
  $('toggle-shadows').addEventListener('change', (e) => {
    renderer.shadowMap.enabled = e.target.checked;
    scene.traverse((o) => { if (o.material) o.material.needsUpdate = true; });
    state.needsRender = true;
  });
  $('reset-camera').addEventListener('click', frameCamera);
  $('info-close').addEventListener('click', () => select(-1));
  $('info-contacts').addEventListener('click', (e) => {
    const a = e.target.closest('a[data-body]');
    if (a) select(Number(a.dataset.body));
  });

  // click (not drag) on the canvas selects the body under the pointer
  const canvas = renderer.domElement;
  let down = null;
  canvas.addEventListener('pointerdown', (e) => { down = e.button === 0 ? [e.clientX, e.clientY] : null; });
  canvas.addEventListener('pointerup', (e) => {
    if (!down || e.button !== 0) return;
    const moved = Math.hypot(e.clientX - down[0], e.clientY - down[1]);
    down = null;
    if (moved <= 4) select(pick(e.clientX, e.clientY));
  });

  window.addEventListener('keydown', (e) => {
    const t = e.target; // form controls keep their own keys (space on a button clicks it)
    if (t instanceof HTMLInputElement || t instanceof HTMLSelectElement || t instanceof HTMLButtonElement) return;
    if (e.key === ' ') { e.preventDefault(); setPlaying(!state.playing); }
    else if (e.key === 'ArrowRight') { setPlaying(false); setFrame(state.frame + 1); }
    else if (e.key === 'ArrowLeft') { setPlaying(false); setFrame(state.frame - 1); }
    else if (e.key === 'Home') { setPlaying(false); setFrame(0); }
    else if (e.key === 'End') { setPlaying(false); setFrame(F - 1); }
    else if (e.key === 'Escape') select(-1);
    else if (e.key === 'f') frameCamera();
    else if (e.key === 's') showSettings($('settings').hidden);
  });
}

function frameAtTime(t) {
  // last frame with frameTime <= t (binary search)
  let lo = 0, hi = F - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (frameTime[mid] <= t + 1e-9) lo = mid; else hi = mid - 1;
  }
  return lo;
}

function tick(now) {
  requestAnimationFrame(tick);
  if (state.playing) {
    if (state.lastTick !== null) {
      state.playTime += ((now - state.lastTick) / 1000) * state.speed;
      const end = frameTime[F - 1];
      if (state.playTime > end) {
        if (state.loop) state.playTime = 0; // start over
        else { state.playTime = end; setPlaying(false); }
      }
      const f = frameAtTime(state.playTime);
      if (f !== state.frame) { state.frame = f; applyFrame(); }
    }
    state.lastTick = now;
  }
  if (state.needsRender) {
    state.needsRender = false;
    renderer.render(scene, camera);
    state.renderCount++;
  }
}

// ------------------------------------------------------------------------------------------ start
function fail(err) {
  state.error = String(err && err.message ? err.message : err);
  const s = $('status');
  s.hidden = false;
  s.classList.add('error');
  s.textContent = `tumble viewer: ${state.error}`;
  console.error(err);
}

async function main() {
  try {
    await load();
    buildScene();
    buildSettings();
    bindControls();
    const m = rec.meta;
    $('scene-label').textContent = `${m.scene || rec.file || 'recording'} · ${m.solver} · ${N} bodies · ${F} frames`
      + ` · dt ${fmt(m.dt * 1000, 3)} ms × ${m.every}`;
    document.title = `tumble viewer — ${m.scene || rec.file}`;
    state.frame = 0;
    state.playTime = 0;
    applyFrame();
    renderer.render(scene, camera);
    state.renderCount++;
    state.needsRender = false;
    $('status').hidden = true;
    state.ready = true;
    requestAnimationFrame(tick);
  } catch (err) {
    fail(err);
  }
}

main();
