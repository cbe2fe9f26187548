// tidemark's web dashboard: plain JavaScript and SVG, served by tidemarkd from its binary.
// Every API call sends the bearer token kept in this tab's session storage (asked for once, on
// the first 401); no token in URLs, no cookies.
'use strict';

const MIN_WM = null;  // the REST API renders "no watermark yet" as null
const MAX_WM = 9223372036854775807;
const POLL_MS = 1000;
const TOKEN_KEY = 'tidemark-token';

let pollTimer = null;
let view = { jid: null, plan: null, history: {} };

function h(tag, attrs, ...children) {
  const svg = ['svg', 'rect', 'text', 'path', 'g', 'polyline', 'line', 'defs', 'marker', 'title'].includes(tag);
  const el = svg ? document.createElementNS('http://www.w3.org/2000/svg', tag) : document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined) continue;
    el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return el;
}

async function api(method, path, body) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers['Authorization'] = 'Bearer ' + token;
  if (body !== undefined) headers['Content-Type'] = 'application/yaml';
  const res = await fetch(path, { method, headers, body, cache: 'no-store', credentials: 'omit' });
  if (res.status === 401) {
    await askToken();
    return api(method, path, body);
  }
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch (e) { json = null; }
  if (!res.ok) {
    const errors = json && json.errors ? json.errors.join('\n') : text;
    throw new Error(res.status + ': ' + errors);
  }
  return json;
}

let tokenWaiters = null;
function askToken() {
  if (tokenWaiters) return new Promise((r) => tokenWaiters.push(r));
  tokenWaiters = [];
  return new Promise((resolve) => {
    tokenWaiters.push(resolve);
    const dialog = document.getElementById('token-dialog');
    const form = document.getElementById('token-form');
    form.onsubmit = () => {
      sessionStorage.setItem(TOKEN_KEY, document.getElementById('token-input').value.trim());
      dialog.close();
      const waiters = tokenWaiters;
      tokenWaiters = null;
      waiters.forEach((w) => w());
    };
    dialog.showModal();
  });
}

function fmtWm(wm) {
  if (wm === null || wm === undefined) return '-';
  if (wm >= MAX_WM) return 'MAX';
  if (Math.abs(wm) < 1e11) return (wm / 1000).toFixed(3) + 's';  // event times near 0: seconds
  return new Date(wm).toISOString().replace('T', ' ').replace('Z', '');
}
function fmtDuration(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm ' + (s % 60) + 's';
  return Math.floor(s / 3600) + 'h ' + Math.floor((s % 3600) / 60) + 'm';
}
function clip(text, n) { return text.length > n ? text.slice(0, n - 1) + '…' : text; }
function bpLevel(ratio) { return ratio <= 0.10 ? 'ok' : ratio <= 0.5 ? 'low' : 'high'; }
function setStatus(text) { document.getElementById('status').textContent = text || ''; }

// ---- job list ----

async function renderJobs(main, hash) {
  const overview = await api('GET', '/jobs/overview');
  if (location.hash !== hash) return;  // the user went elsewhere meanwhile
  const rows = overview.jobs.slice().reverse().map((j) =>
    h('tr', { 'data-testid': 'job-row', 'data-jid': j.jid },
      h('td', {}, h('a', { href: '#/job/' + encodeURIComponent(j.jid) }, j.name)),
      h('td', {}, j.jid),
      h('td', { class: 'state-' + j.state, 'data-testid': 'job-state' }, j.state),
      h('td', { class: 'num' }, fmtDuration(j.duration)),
      h('td', { class: 'num' }, j.tasks.finished + '/' + j.tasks.total)));
  const table = h('table', { 'data-testid': 'jobs' },
    h('tr', {}, h('th', {}, 'Name'), h('th', {}, 'ID'), h('th', {}, 'State'), h('th', {}, 'Duration'),
      h('th', {}, 'Subtasks finished')),
    rows);
  // The submit form stays while the list refreshes, so typing is not interrupted.
  let list = document.getElementById('job-list');
  if (!list || view.jid !== null || formDirty) {
    view = { jid: null, plan: null, history: {} };
    formDirty = false;
    list = h('div', { id: 'job-list' });
    main.replaceChildren(h('h2', {}, 'Jobs'), list, submitForm());
  }
  list.replaceChildren(table);
}
let formDirty = false;

let draftYaml = '';
let draftFile = '';
let submitMessage = null;
function submitForm() {
  const area = h('textarea', { id: 'submit-yaml', 'data-testid': 'submit-yaml', placeholder: 'job YAML',
    oninput: (e) => { draftYaml = e.target.value; } });
  area.value = draftYaml;
  const file = h('input', { id: 'submit-file', placeholder: 'file name for diagnostics (optional)', size: 40,
    oninput: (e) => { draftFile = e.target.value; } });
  file.value = draftFile;
  const msg = h('div', { 'data-testid': 'submit-result', class: submitMessage && submitMessage.error ? 'error' : '' },
    submitMessage ? submitMessage.text : '');
  const button = h('button', { 'data-testid': 'submit', onclick: async () => {
    try {
      const q = draftFile ? '?file=' + encodeURIComponent(draftFile) : '';
      const r = await api('POST', '/jobs' + q, draftYaml);
      submitMessage = { text: 'submitted ' + r.jid, jid: r.jid };
      draftYaml = '';
    } catch (e) {
      submitMessage = { text: e.message, error: true };
    }
    formDirty = true;
    refresh();
  } }, 'Submit');
  return h('div', {}, h('h2', {}, 'Submit a job'), area, h('div', {}, file, ' ', button), msg);
}

// ---- job page ----

function taskFigures(job) {
  const byTask = {};
  for (const t of job.tasks || []) byTask[t.name] = t;
  return byTask;
}

function vertexSummary(node, task) {
  const s = { recordsIn: 0, recordsOut: 0, rateIn: 0, lowWm: undefined, outWm: undefined, bp: 0, late: 0,
    lateSide: 0, finished: 0, subtasks: (task && task.subtasks) || [] };
  for (const st of s.subtasks) {
    s.recordsIn += st['records-in'];
    const ops = st.operators || [];
    if (ops.length) s.recordsOut += ops[ops.length - 1]['records-out'];
    const m = st.metrics || {};
    s.rateIn += m.numRecordsInPerSecond || 0;
    s.bp = Math.max(s.bp, (m.backPressuredTimeMsPerSecond || 0) / 1000);
    const wm = st['input-watermark'];
    if (s.lowWm === undefined || wm === null || (s.lowWm !== null && wm < s.lowWm)) s.lowWm = wm;
    // The chain's output watermark: of its last operator that emits watermarks (sinks emit none).
    const emitting = ops.filter((o) => o['output-watermark'] !== null);
    const out = emitting.length ? emitting[emitting.length - 1]['output-watermark'] : null;
    if (s.outWm === undefined || out === null || (s.outWm !== null && out < s.outWm)) s.outWm = out;
    for (const op of ops) {
      s.late += (op.metrics || {}).numLateRecordsDropped || 0;
      s.lateSide += (op.metrics || {}).numLateRecordsSideOutput || 0;
    }
    if (st.finished) s.finished++;
  }
  const isSource = node.operators[0] && node.operators[0].type === 'source';
  s.wm = isSource ? (s.outWm === undefined ? null : s.outWm) : (s.lowWm === undefined ? null : s.lowWm);
  return s;
}

function layout(nodes) {
  const depth = {};
  for (const n of nodes) {  // topological order: inputs come first
    depth[n.id] = n.inputs.reduce((d, i) => Math.max(d, (depth[i.id] || 0) + 1), 0);
  }
  const columns = {};
  const pos = {};
  for (const n of nodes) {
    const c = depth[n.id];
    columns[c] = (columns[c] || 0) + 1;
    pos[n.id] = { x: 20 + c * 340, y: 20 + (columns[c] - 1) * 150 };
  }
  const width = 40 + (Math.max(0, ...Object.values(depth)) + 1) * 340;
  const height = 40 + Math.max(1, ...Object.values(columns)) * 150;
  return { pos, width, height };
}

function renderDag(plan, job) {
  const W = 240, H = 110;
  const { pos, width, height } = layout(plan.nodes);
  const tasks = taskFigures(job);
  const svg = h('svg', { class: 'dag', width, height, 'data-testid': 'dag' },
    h('defs', {}, h('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8,
      markerHeight: 8, orient: 'auto-start-reverse' }, h('path', { d: 'M 0 0 L 10 5 L 0 10 z' }))));
  for (const n of plan.nodes) {
    for (const i of n.inputs) {
      const a = pos[i.id], b = pos[n.id];
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      const mx = (x1 + x2) / 2;
      svg.append(h('g', { 'data-testid': 'dag-edge', 'data-from': i.id, 'data-to': n.id },
        h('path', { class: 'edge', d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}` }),
        h('text', { x: mx - 30, y: (y1 + y2) / 2 - 6 }, i.ship_strategy + (i['side-output'] ? ' [' + i['side-output'] + ']' : ''))));
    }
  }
  for (const n of plan.nodes) {
    const p = pos[n.id];
    const s = vertexSummary(n, tasks[n.description]);
    const level = bpLevel(s.bp);
    svg.append(h('g', { 'data-testid': 'dag-node', 'data-vid': n.id, 'data-watermark': s.wm === null ? '' : s.wm,
      'data-backpressure': level },
      h('title', {}, n.description),
      h('rect', { class: 'node bp-' + level, x: p.x, y: p.y, width: W, height: H, rx: 6 }),
      h('text', { class: 'title', x: p.x + 8, y: p.y + 18 }, clip(n.operators.map((o) => o.id).join(' → '), 34)),
      h('text', { x: p.x + 8, y: p.y + 36 }, clip('parallelism ' + n.parallelism + ' · ' + n.operators.map((o) => o.type).join(', '), 38)),
      h('text', { x: p.x + 8, y: p.y + 54 }, 'in ' + s.recordsIn + ' · out ' + s.recordsOut + ' · ' + s.rateIn + '/s'),
      h('text', { x: p.x + 8, y: p.y + 72, 'data-testid': 'node-watermark' }, 'watermark ' + fmtWm(s.wm)),
      h('text', { x: p.x + 8, y: p.y + 90 }, 'back pressure ' + level.toUpperCase() +
        (s.late || s.lateSide ? ' · late ' + (s.late + s.lateSide) : ''))));
  }
  return svg;
}

function renderChart(vid) {
  const pts = (view.history[vid] || []).filter((p) => p.wm !== null && p.wm < MAX_WM);
  const W = 360, H = 120;
  const svg = h('svg', { class: 'chart', width: W, height: H, 'data-testid': 'wm-chart', 'data-vid': vid });
  if (pts.length < 2) {
    svg.append(h('text', { x: 10, y: H / 2 }, 'watermark over time: waiting for data'));
    return svg;
  }
  const t0 = pts[0].t, t1 = pts[pts.length - 1].t;
  const w0 = Math.min(...pts.map((p) => p.wm)), w1 = Math.max(...pts.map((p) => p.wm));
  const x = (t) => 30 + (W - 40) * (t - t0) / Math.max(1, t1 - t0);
  const y = (w) => H - 20 - (H - 40) * (w - w0) / Math.max(1, w1 - w0);
  svg.append(h('polyline', { points: pts.map((p) => x(p.t) + ',' + y(p.wm)).join(' ') }),
    h('text', { x: 4, y: 12 }, fmtWm(w1)), h('text', { x: 4, y: H - 4 }, fmtWm(w0) + ' · last ' +
      fmtDuration(t1 - t0)));
  return svg;
}

function splitRows(job) {
  const rows = [];
  for (const t of job.tasks || []) {
    for (const st of t.subtasks) {
      for (const op of st.operators) {
        const m = op.metrics || {};
        const splits = {};
        for (const [k, v] of Object.entries(m)) {
          if (!k.startsWith('split.')) continue;
          const dot = k.lastIndexOf('.');
          if (dot <= 6) continue;
          const id = k.slice(6, dot);
          (splits[id] = splits[id] || {})[k.slice(dot + 1)] = v;
        }
        for (const [id, f] of Object.entries(splits)) {
          const finished = f.idle === undefined && f.watermark === undefined;
          const state = finished ? 'finished' : f.paused ? 'paused' : f.idle ? 'idle' : 'active';
          rows.push(h('tr', { 'data-testid': 'split-row', 'data-split': id, 'data-records': f.numRecordsOut ?? f.records ?? '' },
            h('td', {}, op.name + '#' + st.subtask), h('td', {}, id),
            h('td', { class: 'num' }, f.numRecordsOut ?? f.records ?? '-'),
            h('td', { class: 'num', 'data-testid': 'split-watermark' }, fmtWm(f.watermark ?? null)),
            h('td', { 'data-testid': 'split-state' }, state),
            h('td', { class: 'num' }, f.idleTimeMsPerSecond ?? '-'),
            h('td', { class: 'num' }, f.pausedTimeMsPerSecond ?? '-')));
        }
      }
    }
  }
  return rows;
}

function subtaskRows(plan, job) {
  const tasks = taskFigures(job);
  const rows = [];
  for (const n of plan.nodes) {
    for (const st of (tasks[n.description] || { subtasks: [] }).subtasks) {
      const m = st.metrics || {};
      const ops = st.operators || [];
      const late = ops.reduce((a, o) => a + ((o.metrics || {}).numLateRecordsDropped || 0), 0);
      const side = ops.reduce((a, o) => a + ((o.metrics || {}).numLateRecordsSideOutput || 0), 0);
      const out = ops.length ? ops[ops.length - 1] : { 'records-out': 0, 'output-watermark': null };
      const lag = st['input-watermark'] !== null && st['input-watermark'] < MAX_WM && job.state === 'RUNNING' &&
        st['input-watermark'] > 1e11 ? fmtDuration(Date.now() - st['input-watermark']) : '-';
      const ratio = (m.backPressuredTimeMsPerSecond || 0) / 1000;
      rows.push(h('tr', { 'data-testid': 'subtask-row', 'data-vid': n.id, 'data-subtask': st.subtask, 'data-late': late + side },
        h('td', {}, n.description + '#' + st.subtask),
        h('td', { class: 'num' }, st['records-in']), h('td', { class: 'num' }, out['records-out']),
        h('td', { class: 'num' }, m.numRecordsInPerSecond ?? '-'),
        h('td', { class: 'num' }, fmtWm(st['input-watermark'])),
        h('td', { class: 'num', 'data-testid': 'output-watermark' }, fmtWm(out['output-watermark'])),
        h('td', { class: 'num' }, lag),
        h('td', { class: 'num' }, (m.busyTimeMsPerSecond ?? '-') + ' / ' + (m.idleTimeMsPerSecond ?? '-') + ' / ' +
          (m.backPressuredTimeMsPerSecond ?? '-')),
        h('td', { class: 'bp-' + bpLevel(ratio) }, bpLevel(ratio).toUpperCase()),
        h('td', { class: 'num', 'data-testid': 'late' }, late + side ? late + ' dropped, ' + side + ' side' : '0')));
    }
  }
  return rows;
}

async function renderJob(main, jid, hash) {
  if (view.jid !== jid) view = { jid, plan: null, history: {} };
  const job = await api('GET', '/jobs/' + encodeURIComponent(jid));
  if (!view.plan || view.plan.nodes.length === 0) view.plan = (await api('GET', '/jobs/' + encodeURIComponent(jid) + '/plan')).plan;
  if (location.hash !== hash || view.jid !== jid) return;  // the user went elsewhere meanwhile
  const plan = view.plan;
  const tasks = taskFigures(job);
  const now = Date.now();
  for (const n of plan.nodes) {
    const s = vertexSummary(n, tasks[n.description]);
    (view.history[n.id] = view.history[n.id] || []).push({ t: now, wm: s.wm });
    if (view.history[n.id].length > 600) view.history[n.id].shift();
  }
  const running = job.state === 'RUNNING';
  main.replaceChildren(...[
    h('h2', {}, job.name + ' ', h('span', { class: 'state-' + job.state, 'data-testid': 'job-state' }, job.state),
      ' · ' + fmtDuration(job.duration) + ' ',
      running ? h('button', { 'data-testid': 'cancel', onclick: async () => {
        try { await api('DELETE', '/jobs/' + encodeURIComponent(jid)); } catch (e) { setStatus(e.message); }
        refresh();
      } }, 'Cancel') : null),
    job['failure-cause'] ? h('div', { class: 'error' }, job['failure-cause']) : null,
    job.report ? h('div', { 'data-testid': 'report' }, job.report) : null,
    renderDag(plan, job),
    h('h2', {}, 'Subtasks'),
    h('table', { 'data-testid': 'subtasks' },
      h('tr', {}, ['Task#subtask', 'Records in', 'Records out', 'In/s', 'Input watermark', 'Output watermark',
        'Lag', 'Busy / idle / back-pressured ms/s', 'Back pressure', 'Late records'].map((t) => h('th', {}, t))),
      subtaskRows(plan, job)),
    h('h2', {}, 'Splits'),
    h('table', { 'data-testid': 'splits' },
      h('tr', {}, ['Operator#subtask', 'Split', 'Records', 'Watermark', 'State', 'Idle ms/s', 'Paused ms/s']
        .map((t) => h('th', {}, t))),
      splitRows(job)),
    h('h2', {}, 'Watermark over time'),
    h('div', { class: 'grid' }, plan.nodes.map((n) => h('div', {}, h('div', {}, n.description), renderChart(n.id))))]
    .filter((c) => c !== null));
}

async function refresh() {
  clearTimeout(pollTimer);
  const main = document.getElementById('main');
  const hash = location.hash;
  const m = hash.match(/^#\/job\/(.+)$/);
  try {
    if (m) await renderJob(main, decodeURIComponent(m[1]), hash);
    else await renderJobs(main, hash);
    setStatus('');
  } catch (e) {
    setStatus(e.message);
  }
  pollTimer = setTimeout(refresh, POLL_MS);
}

window.addEventListener('hashchange', () => {
  document.getElementById('main').replaceChildren();  // nothing of the previous page stays while loading
  refresh();
});
refresh();
