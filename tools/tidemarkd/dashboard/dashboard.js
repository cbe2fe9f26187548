// tidemark's web dashboard: plain JavaScript and SVG, served by tidemarkd from its binary.
// Every API call sends the bearer token kept in this tab's session storage (asked for once, on
// the first 401); no token in URLs, no cookies.
'use strict';

const MIN_WM = null;  // the REST API renders "no watermark yet" as null
const MAX_WM = 9223372036854775807;
const POLL_MS = 1000;
const TOKEN_KEY = 'tidemark-token';

let pollTimer = null;
let view = { jid: null, plan: null, history: {}, tabData: {} };

function h(tag, attrs, ...children) {
  const svg = ['svg', 'rect', 'text', 'path', 'g', 'polyline', 'line', 'defs', 'marker', 'title', 'tspan'].includes(tag);
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

// Times as the CLI prints them (runtime/core/time_format.h, TimeFormat::kReadable): event times
// that look like epochs (at least 1e11 ms from 1970) as ISO-8601 UTC with milliseconds and `Z`,
// smaller ones (synthetic test times) as seconds (`9.149s`), `MIN` (no watermark yet) and `MAX`;
// durations as `250ms`, `1.5s`, `3m 27s`, `1h 2m`, `2d 3h`.
const EPOCH_LOOKING = 1e11;
function fmtSeconds(ms) {
  const neg = ms < 0;
  const mag = Math.abs(ms);
  let out = (neg ? '-' : '') + Math.floor(mag / 1000);
  const frac = mag % 1000;
  if (frac !== 0) out += '.' + String(frac).padStart(3, '0').replace(/0+$/, '');
  return out + 's';
}
function fmtWm(wm) {
  if (wm === null || wm === undefined) return 'MIN';
  if (wm >= MAX_WM) return 'MAX';
  if (Math.abs(wm) < EPOCH_LOOKING) return fmtSeconds(wm);
  return new Date(wm).toISOString();
}
function fmtDuration(ms) {
  if (ms < 0) return '-' + fmtDuration(-ms);
  if (ms < 1000) return ms + 'ms';
  if (ms < 60000) return fmtSeconds(ms);
  const two = (n, u, m, v) => (m === 0 ? n + u : n + u + ' ' + m + v);
  const s = Math.floor(ms / 1000);
  if (s < 3600) return two(Math.floor(s / 60), 'm', s % 60, 's');
  if (s < 86400) return two(Math.floor(s / 3600), 'h', Math.floor(s / 60) % 60, 'm');
  return two(Math.floor(s / 86400), 'd', Math.floor(s / 3600) % 24, 'h');
}
function fmtBytes(n) {
  if (n < 1024) return n + ' B';
  if (n < 1024 * 1024) return (n / 1024).toFixed(1) + ' KiB';
  return (n / 1024 / 1024).toFixed(1) + ' MiB';
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
    view = { jid: null, plan: null, history: {}, tabData: {} };
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
const minWm = (a, b) => (a === undefined ? b : a === null || b === null ? null : Math.min(a, b));

// Per chained operator of a task, summed over its subtasks: records in (the head: the task's
// records in; a chained operator: what the operators before it emitted on the output it reads,
// main or side), records out, side outputs, the watermark it emitted (a sink, which emits none:
// the watermark it got), input errors, records without timestamp, late records.
function operatorFigures(node, task, vertices) {
  const byId = {};
  for (const o of node.operators) {
    byId[o.id] = { id: o.id, type: o.type, in: 0, out: 0, side: {}, wm: undefined, errors: 0, noTs: 0,
      late: 0, lateSide: 0, firstError: null };
  }
  for (const st of (task && task.subtasks) || []) {
    for (const op of st.operators || []) {
      const f = byId[op.name];
      if (!f) continue;
      const m = op.metrics || {};
      f.out += op['records-out'];
      for (const [tag, n] of Object.entries(op['side-records-out'] || {})) f.side[tag] = (f.side[tag] || 0) + n;
      const wm = op['output-watermark'] !== null ? op['output-watermark'] : m.currentInputWatermark ?? null;
      f.wm = minWm(f.wm, wm);
      f.errors += m.numInputErrors || 0;
      f.noTs += m.numRecordsWithoutTimestamp || 0;
      f.late += m.numLateRecordsDropped || 0;
      f.lateSide += m.numLateRecordsSideOutput || 0;
      if (!f.firstError && op.notes && op.notes.firstInputError) f.firstError = op.notes.firstInputError;
    }
    const head = byId[node.operators[0].id];
    if (head) head.in += st['records-in'];
  }
  const vertex = {};
  for (const v of vertices || []) vertex[v.id] = v;
  for (const o of node.operators.slice(1)) {
    const f = byId[o.id];
    f.in = 0;
    for (const i of (vertex[o.id] || { inputs: [] }).inputs) {
      const up = byId[i.id];
      if (!i.chained || !up) continue;
      f.in += i['side-output'] ? up.side[i['side-output']] || 0 : up.out;
      // A chained sink emits no watermark and may not report the one it got: its upstream's.
      if (f.wm === undefined || f.wm === null) f.wm = up.wm === undefined ? null : up.wm;
    }
  }
  return node.operators.map((o) => {
    const f = byId[o.id];
    if (f.wm === undefined) f.wm = null;
    return f;
  });
}

function vertexSummary(node, task) {
  const s = { recordsIn: 0, rateIn: 0, lowWm: undefined, outWm: undefined, bp: 0, subtasks: (task && task.subtasks) || [] };
  for (const st of s.subtasks) {
    s.recordsIn += st['records-in'];
    const ops = st.operators || [];
    const m = st.metrics || {};
    s.rateIn += m.numRecordsInPerSecond || 0;
    s.bp = Math.max(s.bp, (m.backPressuredTimeMsPerSecond || 0) / 1000);
    s.lowWm = minWm(s.lowWm, st['input-watermark']);
    // The chain's output watermark: of its last operator that emits watermarks (sinks emit none).
    const emitting = ops.filter((o) => o['output-watermark'] !== null);
    s.outWm = minWm(s.outWm, emitting.length ? emitting[emitting.length - 1]['output-watermark'] : null);
  }
  const isSource = node.operators[0] && node.operators[0].type === 'source';
  s.wm = isSource ? (s.outWm === undefined ? null : s.outWm) : (s.lowWm === undefined ? null : s.lowWm);
  return s;
}

const BOX_W = 340;
const boxHeight = (n) => 62 + 18 * n.operators.length;

function layout(nodes) {
  const depth = {};
  for (const n of nodes) {  // topological order: inputs come first
    depth[n.id] = n.inputs.reduce((d, i) => Math.max(d, (depth[i.id] || 0) + 1), 0);
  }
  const columnY = {};
  const pos = {};
  for (const n of nodes) {
    const c = depth[n.id];
    const y = columnY[c] || 20;
    pos[n.id] = { x: 20 + c * (BOX_W + 100), y };
    columnY[c] = y + boxHeight(n) + 30;
  }
  const width = 40 + (Math.max(0, ...Object.values(depth)) + 1) * (BOX_W + 100) - 100;
  const height = 10 + Math.max(40, ...Object.values(columnY));
  return { pos, width, height };
}

function opLine(f) {
  let line = (f.type === 'source' ? 'out ' + f.out : 'in ' + f.in + ' · out ' + f.out) +
    Object.entries(f.side).map(([tag, n]) => ' (+ ' + tag + ' ' + n + ')').join('');
  line += ' · wm ' + fmtWm(f.wm);
  if (f.errors) line += ' · ' + f.errors + ' input errors';
  if (f.noTs) line += ' · ' + f.noTs + ' without timestamp';
  if (f.late || f.lateSide) line += ' · ' + (f.late + f.lateSide) + ' late';
  return line;
}

function renderDag(plan, job, running) {
  const W = BOX_W;
  const { pos, width, height } = layout(plan.nodes);
  const tasks = taskFigures(job);
  const svg = h('svg', { class: 'dag', width, height, 'data-testid': 'dag' },
    h('defs', {}, h('marker', { id: 'arrow', viewBox: '0 0 10 10', refX: 10, refY: 5, markerWidth: 8,
      markerHeight: 8, orient: 'auto-start-reverse' }, h('path', { d: 'M 0 0 L 10 5 L 0 10 z' }))));
  for (const n of plan.nodes) {
    for (const i of n.inputs) {
      const a = pos[i.id], b = pos[n.id];
      if (!a || !b) continue;
      const x1 = a.x + W, y1 = a.y + 30, x2 = b.x, y2 = b.y + 30;
      const mx = (x1 + x2) / 2;
      svg.append(h('g', { 'data-testid': 'dag-edge', 'data-from': i.id, 'data-to': n.id },
        h('path', { class: 'edge', d: `M ${x1} ${y1} C ${mx} ${y1}, ${mx} ${y2}, ${x2} ${y2}` }),
        h('text', { x: mx - 30, y: (y1 + y2) / 2 - 6 }, i.ship_strategy + (i['side-output'] ? ' [' + i['side-output'] + ']' : ''))));
    }
  }
  for (const n of plan.nodes) {
    const p = pos[n.id];
    const task = tasks[n.description];
    const s = vertexSummary(n, task);
    const level = bpLevel(s.bp);
    const ops = operatorFigures(n, task, job.vertices);
    svg.append(h('g', { 'data-testid': 'dag-node', 'data-vid': n.id, 'data-watermark': s.wm === null ? '' : s.wm,
      'data-backpressure': level },
      h('title', {}, n.description),
      h('rect', { class: 'node bp-' + level, x: p.x, y: p.y, width: W, height: boxHeight(n), rx: 6 }),
      h('text', { class: 'title', x: p.x + 8, y: p.y + 18 }, clip(n.operators.map((o) => o.id).join(' → '), 40)),
      h('text', { x: p.x + 8, y: p.y + 36 }, 'parallelism ' + n.parallelism + ' · in ' + s.recordsIn +
        (running ? ' · ' + s.rateIn + '/s' : '') + ' · back pressure ' + (running ? level.toUpperCase() : '-')),
      ops.map((f, k) => h('text', { class: 'op', x: p.x + 8, y: p.y + 56 + 18 * k, 'data-testid': 'dag-op',
        'data-op': f.id, 'data-in': f.in, 'data-out': f.out, 'data-late': f.late + f.lateSide, 'data-errors': f.errors },
        h('tspan', { class: 'opname' }, clip(f.id, 12) + ' '), opLine(f))),
      h('text', { x: p.x + 8, y: p.y + boxHeight(n) - 8, 'data-testid': 'node-watermark' }, 'watermark ' + fmtWm(s.wm))));
  }
  return svg;
}

// Input errors, records without timestamp and late records per source / operator, with the first
// bad place when the source noted one.
function problemRows(plan, job) {
  const tasks = taskFigures(job);
  const rows = [];
  for (const n of plan.nodes) {
    for (const f of operatorFigures(n, tasks[n.description], job.vertices)) {
      if (!f.errors && !f.noTs && !f.late && !f.lateSide) continue;
      rows.push(h('tr', { 'data-testid': 'problem-row', 'data-op': f.id },
        h('td', {}, f.id), h('td', { class: 'num', 'data-testid': 'input-errors' }, f.errors),
        h('td', { class: 'num' }, f.noTs), h('td', { class: 'num' }, f.late), h('td', { class: 'num' }, f.lateSide),
        h('td', {}, f.firstError || '')));
    }
  }
  return rows;
}

function renderChart(vid, job, finalWm) {
  const pts = (view.history[vid] || []).filter((p) => p.wm !== null && p.wm < MAX_WM);
  const W = 420, H = 150, L = 120, R = 10, T = 12, B = 30;
  const svg = h('svg', { class: 'chart', width: W, height: H, 'data-testid': 'wm-chart', 'data-vid': vid });
  if (pts.length < 2) {
    const text = job.state === 'RUNNING' ? 'watermark over time: waiting for data'
      : 'job ' + job.state + ' · final watermark ' + fmtWm(finalWm);
    svg.append(h('text', { x: 10, y: H / 2, 'data-testid': 'chart-note' }, text));
    return svg;
  }
  const t0 = pts[0].t, t1 = pts[pts.length - 1].t;
  let w0 = Math.min(...pts.map((p) => p.wm)), w1 = Math.max(...pts.map((p) => p.wm));
  if (w1 === w0) w1 = w0 + 1;
  const x = (t) => L + (W - L - R) * (t - t0) / Math.max(1, t1 - t0);
  const y = (w) => H - B - (H - T - B) * (w - w0) / (w1 - w0);
  const hhmmss = (t) => new Date(t).toISOString().slice(11, 19);
  svg.append(
    h('line', { class: 'axis', x1: L, y1: H - B, x2: W - R, y2: H - B }),
    h('line', { class: 'axis', x1: L, y1: T, x2: L, y2: H - B }),
    ...[0, 0.5, 1].map((f) => h('text', { class: 'xtick', x: L + (W - L - R) * f, y: H - B + 14, 'text-anchor': f === 0 ? 'start' : f === 1 ? 'end' : 'middle' },
      hhmmss(t0 + (t1 - t0) * f))),
    h('text', { x: (L + W) / 2, y: H - 2, 'text-anchor': 'middle' }, 'processing time (UTC), last ' + fmtDuration(t1 - t0)),
    h('text', { class: 'ytick', x: L - 4, y: T + 8, 'text-anchor': 'end' }, fmtWm(w1)),
    h('text', { class: 'ytick', x: L - 4, y: H - B, 'text-anchor': 'end' }, fmtWm(w0)),
    h('polyline', { points: pts.map((p) => x(p.t) + ',' + y(p.wm)).join(' ') }),
    h('text', { class: 'last', x: L + 6, y: T + 8, 'data-testid': 'chart-last' },
      'now ' + fmtWm(pts[pts.length - 1].wm)));
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
            h('td', { class: 'num', 'data-testid': 'split-watermark' }, f.watermark === undefined ? '-' : fmtWm(f.watermark)),
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
  const running = job.state === 'RUNNING';
  const rows = [];
  for (const n of plan.nodes) {
    for (const st of (tasks[n.description] || { subtasks: [] }).subtasks) {
      const m = st.metrics || {};
      const ops = st.operators || [];
      const late = ops.reduce((a, o) => a + ((o.metrics || {}).numLateRecordsDropped || 0), 0);
      const side = ops.reduce((a, o) => a + ((o.metrics || {}).numLateRecordsSideOutput || 0), 0);
      const errors = ops.reduce((a, o) => a + ((o.metrics || {}).numInputErrors || 0), 0);
      const emitting = ops.filter((o) => o['output-watermark'] !== null);
      const outWm = emitting.length ? emitting[emitting.length - 1]['output-watermark'] : null;
      const lag = st['input-watermark'] !== null && st['input-watermark'] < MAX_WM && running &&
        st['input-watermark'] > EPOCH_LOOKING ? fmtDuration(Date.now() - st['input-watermark']) : '-';
      const ratio = (m.backPressuredTimeMsPerSecond || 0) / 1000;
      // A job that ended shows its final figures: no rates, no back pressure.
      rows.push(h('tr', { 'data-testid': 'subtask-row', 'data-vid': n.id, 'data-subtask': st.subtask, 'data-late': late + side },
        h('td', {}, n.description + '#' + st.subtask),
        h('td', { class: 'num' }, st['records-in']),
        h('td', { class: 'num' }, ops.map((o) => o['records-out']).join(' / ')),
        h('td', { class: 'num' }, running ? m.numRecordsInPerSecond ?? '-' : '-'),
        h('td', { class: 'num' }, fmtWm(st['input-watermark'])),
        h('td', { class: 'num', 'data-testid': 'output-watermark' }, fmtWm(outWm)),
        h('td', { class: 'num' }, lag),
        h('td', { class: 'num' }, running ? (m.busyTimeMsPerSecond ?? '-') + ' / ' + (m.idleTimeMsPerSecond ?? '-') + ' / ' +
          (m.backPressuredTimeMsPerSecond ?? '-') : '-'),
        running ? h('td', { class: 'bp-' + bpLevel(ratio) }, bpLevel(ratio).toUpperCase()) : h('td', {}, '-'),
        h('td', { class: 'num' }, errors),
        h('td', { class: 'num', 'data-testid': 'late' }, late + side ? late + ' dropped, ' + side + ' side' : '0')));
    }
  }
  return rows;
}

function table(testid, headers, rows) {
  return h('table', { 'data-testid': testid }, h('tr', {}, headers.map((t) => h('th', {}, t))), rows);
}

function overviewTab(plan, job) {
  const running = job.state === 'RUNNING';
  const tasks = taskFigures(job);
  const problems = problemRows(plan, job);
  const dropped = job['dropped-records'] || [];
  return [
    renderDag(plan, job, running),
    dropped.length ? h('div', { 'data-testid': 'dropped-records' }, h('h2', {}, 'Records dropped'),
      h('ul', {}, dropped.map((d) => h('li', { 'data-testid': 'dropped-line' }, typeof d === 'string' ? d : JSON.stringify(d))))) : null,
    h('h2', {}, 'Input errors and late records'),
    problems.length ? table('problems', ['Operator', 'Input errors', 'Without timestamp', 'Late dropped', 'Late to side output',
      'First bad input'], problems) : h('p', { 'data-testid': 'no-problems' }, 'none: every record was read and on time'),
    h('h2', {}, 'Subtasks'),
    table('subtasks', ['Task#subtask', 'Records in', 'Records out (per operator)', 'In/s', 'Input watermark', 'Output watermark',
      'Lag', 'Busy / idle / back-pressured ms/s', 'Back pressure', 'Input errors', 'Late records'], subtaskRows(plan, job)),
    h('h2', {}, 'Splits'),
    table('splits', ['Operator#subtask', 'Split', 'Records', 'Watermark', 'State', 'Idle ms/s', 'Paused ms/s'], splitRows(job)),
    h('h2', {}, 'Watermark over time'),
    h('div', { class: 'grid' }, plan.nodes.map((n) => h('div', {}, h('div', {}, n.description),
      renderChart(n.id, job, vertexSummary(n, tasks[n.description]).wm))))];
}

function checkpointsTab(c) {
  if (!c) return [h('p', {}, 'loading')];
  const latest = c.latest && c.latest.completed;
  const counts = c.counts || {};
  return [
    h('h2', {}, 'Checkpoint counts'),
    table('ckpt-counts', ['Triggered', 'Completed', 'Failed', 'Restored', 'Restarts'],
      h('tr', {}, [counts.total, counts.completed, counts.failed, counts.restored, c.restarts]
        .map((v) => h('td', { class: 'num' }, v ?? 0)))),
    h('h2', {}, 'Latest completed'),
    latest ? table('ckpt-latest', ['ID', 'Size', 'End to end', 'Alignment', 'Path'],
      h('tr', {}, h('td', { class: 'num' }, latest.id), h('td', { class: 'num' }, fmtBytes(latest.state_size)),
        h('td', { class: 'num' }, fmtDuration(latest.end_to_end_duration)), h('td', { class: 'num' }, fmtDuration(latest.alignment_duration)),
        h('td', {}, latest.external_path)))
      : h('p', { 'data-testid': 'ckpt-none' }, 'no checkpoint completed' + (counts.total ? '' : ' (the job has no checkpointing, or none was taken yet)')),
    c.latest && c.latest.restored ? h('p', {}, 'restored from ' + c.latest.restored.external_path) : null,
    h('h2', {}, 'History (last 10)'),
    table('ckpt-history', ['ID', 'Status', 'Kind', 'Triggered', 'End to end', 'Size', 'Alignment', 'Failure'],
      (c.history || []).slice().reverse().map((e) => h('tr', { 'data-testid': 'ckpt-row', 'data-id': e.id, 'data-status': e.status },
        h('td', { class: 'num' }, e.id), h('td', { class: 'state-' + (e.status === 'COMPLETED' ? 'FINISHED' : 'FAILED') }, e.status),
        h('td', {}, e.is_savepoint ? 'savepoint' : 'checkpoint'), h('td', {}, fmtWm(e.trigger_timestamp)),
        h('td', { class: 'num' }, fmtDuration(e.end_to_end_duration)), h('td', { class: 'num' }, fmtBytes(e.state_size)),
        h('td', { class: 'num' }, fmtDuration(e.alignment_duration)), h('td', {}, e.failure_message || ''))))].filter((x) => x !== null);
}

function exceptionsTab(x) {
  if (!x) return [h('p', {}, 'loading')];
  const causes = x['restart-causes'] || [];
  return [
    h('h2', {}, 'Root exception'),
    x['root-exception'] ? h('div', {}, h('div', {}, 'at ', h('span', { 'data-testid': 'exception-time' }, fmtWm(x.timestamp))),
      h('pre', { class: 'error', 'data-testid': 'root-exception' }, x['root-exception']))
      : h('p', { 'data-testid': 'no-exception' }, 'none: the job has not failed'),
    h('h2', {}, 'Restarted attempts (' + causes.length + ')'),
    causes.length ? h('ol', {}, causes.map((c) => h('li', {}, h('pre', { class: 'error', 'data-testid': 'restart-cause' }, c))))
      : h('p', {}, 'none')];
}

function logTab(l) {
  if (!l) return [h('p', {}, 'loading')];
  const dropped = l['dropped-records'] || [];
  return [
    h('h2', {}, 'Output and log (' + l.lines.length + ' lines' + (l.dropped ? ', ' + l.dropped + ' older dropped' : '') + ')'),
    h('pre', { class: 'log', 'data-testid': 'log-lines' }, l.lines.join('\n')),
    dropped.length ? h('div', {}, h('h2', {}, 'Records dropped'),
      h('ul', {}, dropped.map((d) => h('li', {}, typeof d === 'string' ? d : JSON.stringify(d))))) : null].filter((x) => x !== null);
}

function explainTab(e, jid) {
  if (!e) return [h('p', {}, 'loading')];
  return [
    h('h2', {}, 'Why the watermarks stand where they do ' + (e.live ? '(live)' : '(at the end)'), ' ',
      h('button', { 'data-testid': 'explain-refresh', onclick: () => { view.tabData.explain = null; refresh(); } }, 'Refresh')),
    e.error ? h('div', { class: 'error' }, e.error) : h('pre', { class: 'log', 'data-testid': 'explain' }, e.explain)];
}

const TABS = ['overview', 'checkpoints', 'exceptions', 'log', 'explain'];
const TAB_ROUTE = { checkpoints: 'checkpoints', exceptions: 'exceptions', log: 'logs', explain: 'explain' };

async function loadTab(jid, tab, ended) {
  const path = '/jobs/' + encodeURIComponent(jid) + '/' + TAB_ROUTE[tab];
  // explain asks the worker for snapshots: once per visit (and Refresh), not every second; the
  // others poll while the job runs and are read once more when it ended.
  if (tab === 'explain' && view.tabData.explain) return;
  if (ended && view.tabData[tab] && view.tabData[tab].final) return;
  try {
    const data = await api('GET', path);
    data.final = ended;
    view.tabData[tab] = data;
  } catch (e) {
    view.tabData[tab] = { error: e.message, final: ended };
  }
}

async function renderJob(main, jid, tab, hash) {
  if (view.jid !== jid) view = { jid, plan: null, history: {}, tabData: {} };
  const job = await api('GET', '/jobs/' + encodeURIComponent(jid));
  if (!view.plan || view.plan.nodes.length === 0) view.plan = (await api('GET', '/jobs/' + encodeURIComponent(jid) + '/plan')).plan;
  const running = job.state === 'RUNNING';
  if (tab !== 'overview') await loadTab(jid, tab, !running);
  if (location.hash !== hash || view.jid !== jid) return;  // the user went elsewhere meanwhile
  const plan = view.plan;
  const tasks = taskFigures(job);
  if (running) {  // the chart follows a running job; an ended one keeps what it saw
    const now = Date.now();
    for (const n of plan.nodes) {
      const s = vertexSummary(n, tasks[n.description]);
      (view.history[n.id] = view.history[n.id] || []).push({ t: now, wm: s.wm });
      if (view.history[n.id].length > 600) view.history[n.id].shift();
    }
  }
  const base = '#/job/' + encodeURIComponent(jid);
  const body = tab === 'checkpoints' ? checkpointsTab(view.tabData.checkpoints)
    : tab === 'exceptions' ? exceptionsTab(view.tabData.exceptions)
      : tab === 'log' ? logTab(view.tabData.log)
        : tab === 'explain' ? explainTab(view.tabData.explain, jid) : overviewTab(plan, job);
  const err = tab !== 'overview' && view.tabData[tab] && view.tabData[tab].error && tab !== 'explain'
    ? h('div', { class: 'error' }, view.tabData[tab].error) : null;
  main.replaceChildren(...[
    h('h2', {}, job.name + ' ', h('span', { class: 'state-' + job.state, 'data-testid': 'job-state' }, job.state),
      ' · ', h('span', { 'data-testid': 'job-duration' }, fmtDuration(job.duration)),
      ' · started ', h('span', { 'data-testid': 'job-start' }, fmtWm(job['start-time'])), ' ',
      running ? h('button', { 'data-testid': 'cancel', onclick: async () => {
        try { await api('DELETE', '/jobs/' + encodeURIComponent(jid)); } catch (e) { setStatus(e.message); }
        refresh();
      } }, 'Cancel') : null),
    job['failure-cause'] ? h('div', { class: 'error', 'data-testid': 'failure-cause' }, job['failure-cause']) : null,
    job.report ? h('div', { 'data-testid': 'report' }, job.report) : null,
    h('nav', { class: 'tabs' }, TABS.map((t) => h('a', { href: t === 'overview' ? base : base + '/' + t,
      class: t === tab ? 'active' : '', 'data-testid': 'tab-' + t }, t[0].toUpperCase() + t.slice(1)))),
    err, ...body]
    .filter((c) => c !== null));
}

async function refresh() {
  clearTimeout(pollTimer);
  const main = document.getElementById('main');
  const hash = location.hash;
  const m = hash.match(/^#\/job\/([^/]+)(?:\/(\w+))?$/);
  try {
    if (m) await renderJob(main, decodeURIComponent(m[1]), TABS.includes(m[2]) ? m[2] : 'overview', hash);
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
