// The dashboard's browser test (issues 15, 42): starts tidemarkd on a private socket and a loopback
// TCP port with a bearer token, opens the dashboard in headless Chromium, gives it the token once,
// submits the two two-split jobs, the checkpoint-and-restart job, a failing job, the bad-input job
// and a long-running job from the page, and checks what the page shows: the DAG's vertices and
// edges, one line per chained operator with its records in / out and watermark, each vertex's final
// watermark, the late count 197 of the operator-mode job, input errors per source, the final
// figures of a finished job, the Checkpoints (history rows), Exceptions (root cause, restart cause),
// Log and Explain tabs, the per-split rows of the long job updating, its watermark chart's axes,
// and cancel from the page.
// Screenshots of the finished jobs' pages are compared with tests/browser/reference/*.png: same
// size, and at most MAX_DIFF of the pixels differ (jids, durations and start times are masked);
// TM_UPDATE_SCREENSHOTS=1 rewrites the references.
//   node dashboard_test.mjs --tidemarkd BIN --chromium BIN --modules NODE_MODULES --out DIR
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, '')] = process.argv[i + 1];
const require = createRequire(path.join(path.resolve(args.modules), 'x.js'));
const { chromium } = require('playwright-core');

const LONG_JOB = `name: long
operators:
  - id: src
    type: source
    source:
      type: sequence
      pacing: 1ms
      splits:
        - {id: early, start: 0s, step: 1ms, count: 100000000}
        - {id: late, start: 10s, step: 1ms, count: 100000000}
    watermarks: {strategy: bounded-out-of-orderness, max-out-of-orderness: 0ms, timestamp-field: ts}
  - id: out
    type: sink
    input: src
    sink: {type: checksum}
`;

// The failing job: the checkpoint-and-restart job without its restart strategy.
const FAILING_JOB = fs.readFileSync('jobs/checkpoint_restart.yaml', 'utf8')
  .replace('name: checkpoint-restart', 'name: fails')
  .replace(/^restart-strategy:.*$/m, 'restart-strategy: {type: none}');

const REFERENCE_DIR = path.join(path.dirname(new URL(import.meta.url).pathname), 'reference');
const MAX_DIFF = 0.02;  // fraction of pixels that may differ (font hinting, antialiasing)

let failures = 0;
function check(ok, what) {
  console.log((ok ? 'ok   ' : 'FAIL ') + what);
  if (!ok) failures++;
}
function eq(actual, expected, what) {
  check(JSON.stringify(actual) === JSON.stringify(expected),
    `${what}: ${JSON.stringify(actual)}${JSON.stringify(actual) === JSON.stringify(expected) ? '' : ' != ' + JSON.stringify(expected)}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tidemark-dash-'));
fs.mkdirSync(args.out, { recursive: true });
const daemon = spawn(args.tidemarkd, ['--socket', path.join(dir, 'd.sock'), '--state-dir', path.join(dir, 'state'), '--listen', '127.0.0.1:0',
  '--token-file', path.join(dir, 'token'), '--log-file', path.join(dir, 'd.log'), '--finished-job-ttl', '0s'],
  { stdio: ['ignore', 'pipe', 'inherit'] });
let browser = null;
let page = null;
try {
  const url = await new Promise((resolve, reject) => {
    let out = '';
    daemon.stdout.on('data', (d) => {
      out += d;
      const m = out.match(/http:\/\/127\.0\.0\.1:(\d+)/);
      if (m) resolve(`http://127.0.0.1:${m[1]}/`);
    });
    daemon.on('exit', (code) => reject(new Error('tidemarkd exited ' + code + ': ' + out)));
    setTimeout(() => reject(new Error('tidemarkd did not start: ' + out)), 30000);
  });
  const token = fs.readFileSync(path.join(dir, 'token'), 'utf8').trim();

  browser = await chromium.launch({ executablePath: args.chromium, headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'] });
  // The page's Content-Security-Policy forbids eval, which Playwright's waitForFunction uses.
  const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, bypassCSP: true });
  page = await context.newPage();
  page.setDefaultTimeout(20000);
  const requests = [];
  page.on('request', (r) => requests.push({ url: r.url(), auth: r.headers()['authorization'] || '' }));
  await page.goto(url);

  // The token is asked for once (the first API call got 401) and kept in session storage.
  await page.waitForSelector('#token-dialog[open]');
  await page.fill('#token-input', token);
  const beforeToken = requests.splice(0);  // the page, its assets and the API call that got 401
  check(beforeToken.length >= 3 && beforeToken.every((r) => r.auth === ''), 'no token sent before it was given');
  await page.click('#token-form button');
  await page.waitForSelector('[data-testid=jobs]');
  eq(await page.evaluate(() => sessionStorage.getItem('tidemark-token')), token, 'token kept in session storage');
  check(await page.evaluate(() => document.cookie === ''), 'no cookies');

  async function submit(yaml, file) {
    await page.fill('[data-testid=submit-yaml]', yaml);
    await page.fill('#submit-file', file);
    await page.click('[data-testid=submit]');
    const text = await page.waitForFunction(() => {
      const t = document.querySelector('[data-testid=submit-result]')?.textContent || '';
      return t.startsWith('submitted ') || t.match(/^\d{3}:/) ? t : null;
    });
    const msg = await text.jsonValue();
    check(msg.startsWith('submitted '), `submit ${file}: ${msg}`);
    // Clear the message for the next submission.
    await page.evaluate(() => { document.querySelector('[data-testid=submit-result]').textContent = ''; });
    return msg.replace('submitted ', '');
  }
  const jids = {};
  for (const mode of ['split', 'operator']) {
    jids[mode] = await submit(fs.readFileSync(`jobs/two_splits_${mode}.yaml`, 'utf8'), `jobs/two_splits_${mode}.yaml`);
  }
  jids.restart = await submit(fs.readFileSync('jobs/checkpoint_restart.yaml', 'utf8'), 'jobs/checkpoint_restart.yaml');
  jids.fails = await submit(FAILING_JOB, 'jobs/fails.yaml');
  jids.bad = await submit(fs.readFileSync('jobs/file_bad_input.yaml', 'utf8'), 'jobs/file_bad_input.yaml');
  jids.long = await submit(LONG_JOB, 'long.yaml');

  // The job list shows all of them with their state.
  const ended = { split: 'FINISHED', operator: 'FINISHED', restart: 'FINISHED', fails: 'FAILED', bad: 'FINISHED' };
  await page.waitForFunction((want) => Object.entries(want).every(([id, state]) => {
    const row = document.querySelector(`[data-testid=job-row][data-jid="${id}"] [data-testid=job-state]`);
    return row && row.textContent === state;
  }), Object.fromEntries(Object.entries(ended).map(([k, v]) => [jids[k], v])));
  eq(await page.locator('[data-testid=job-row]').count(), 6, 'jobs listed');
  await page.screenshot({ path: path.join(args.out, 'jobs.png'), fullPage: true });

  // Shows a tab of a job and waits until `ready` (a selector) is on the page.
  async function show(jid, tab, ready) {
    await page.goto(url + '#/job/' + jid + (tab ? '/' + tab : ''));
    await page.waitForSelector(ready);
  }
  const texts = (sel) => page.$$eval(sel, (ns) => ns.map((n) => n.textContent));
  // The page's screenshot against its reference, compared in the browser (canvas pixels).
  async function screenshot(name) {
    const mask = ['[data-testid=job-duration]', '[data-testid=job-start]', '[data-testid=exception-time]',
      '[data-testid=ckpt-latest] td:last-child'].map((q) => page.locator(q));
    const png = await page.screenshot({ path: path.join(args.out, name + '.png'), fullPage: true, mask, animations: 'disabled' });
    const ref = path.join(REFERENCE_DIR, name + '.png');
    if (process.env.TM_UPDATE_SCREENSHOTS === '1') {
      fs.mkdirSync(REFERENCE_DIR, { recursive: true });
      fs.writeFileSync(ref, png);
      console.log('     wrote ' + ref);
      return;
    }
    if (!fs.existsSync(ref)) {
      check(false, `${name}: reference ${ref} missing (TM_UPDATE_SCREENSHOTS=1 writes it)`);
      return;
    }
    const cmp = await page.evaluate(async ([a, b]) => {
      const load = (b64) => new Promise((res, rej) => {
        const img = new Image();
        img.onload = () => res(img);
        img.onerror = rej;
        img.src = 'data:image/png;base64,' + b64;
      });
      const [x, y] = await Promise.all([load(a), load(b)]);
      if (x.width !== y.width || x.height !== y.height) return { size: [x.width, x.height, y.width, y.height] };
      const pixels = (img) => {
        const c = document.createElement('canvas');
        c.width = img.width; c.height = img.height;
        const g = c.getContext('2d');
        g.drawImage(img, 0, 0);
        return g.getImageData(0, 0, img.width, img.height).data;
      };
      const p = pixels(x), q = pixels(y);
      let diff = 0;
      for (let i = 0; i < p.length; i += 4) {
        if (Math.abs(p[i] - q[i]) + Math.abs(p[i + 1] - q[i + 1]) + Math.abs(p[i + 2] - q[i + 2]) > 96) diff++;
      }
      return { size: null, ratio: diff / (p.length / 4) };
    }, [png.toString('base64'), fs.readFileSync(ref).toString('base64')]);
    check(cmp.size === null && cmp.ratio <= MAX_DIFF, `${name}: screenshot matches its reference (` +
      (cmp.size ? 'size ' + JSON.stringify(cmp.size) : (100 * cmp.ratio).toFixed(3) + '% of pixels differ') + ')');
  }

  const expected = {
    split: { nodes: ['source', 'windows'], chains: ['source', 'windows → fired → late'], late: '0',
      ops: [['source', 400, 400, 0], ['windows', 400, 15, 0], ['fired', 15, 0, 0], ['late', 0, 0, 0]] },
    operator: { nodes: ['source', 'windows'], chains: ['source → assign', 'windows → fired → late'], late: '197',
      ops: [['source', 400, 400, 0], ['assign', 400, 400, 0], ['windows', 400, 11, 197], ['fired', 11, 0, 0], ['late', 197, 0, 0]] },
  };
  for (const mode of ['split', 'operator']) {
    await show(jids[mode], '', '[data-testid=subtask-row]');
    const nodes = await page.$$eval('[data-testid=dag-node]', (ns) => ns.map((n) => n.getAttribute('data-vid')));
    eq(nodes, expected[mode].nodes, `${mode}: DAG vertices`);
    eq(await texts('[data-testid=dag-node] text.title'), expected[mode].chains, `${mode}: chained operators`);
    // One line per chained operator: [id, records in, records out, late records].
    const ops = await page.$$eval('[data-testid=dag-op]', (ns) => ns.map((n) => [n.getAttribute('data-op'),
      Number(n.getAttribute('data-in')), Number(n.getAttribute('data-out')), Number(n.getAttribute('data-late'))]));
    eq(ops, expected[mode].ops, `${mode}: per-operator records in / out / late`);
    const edges = await page.$$eval('[data-testid=dag-edge]', (es) => es.map((e) =>
      e.getAttribute('data-from') + '->' + e.getAttribute('data-to') + ' ' + e.querySelector('text').textContent));
    eq(edges, ['source->windows HASH'], `${mode}: DAG edges`);
    eq(await texts('[data-testid=node-watermark]'), ['watermark MAX', 'watermark MAX'], `${mode}: each vertex's final watermark`);
    const late = await page.$eval('[data-testid=subtask-row][data-vid=windows]', (r) => r.getAttribute('data-late'));
    eq(late, expected[mode].late, `${mode}: late records`);
    eq(await page.textContent('[data-testid=job-state]'), 'FINISHED', `${mode}: state`);
    // A finished job shows its final figures: no chart waiting for data.
    eq(await texts('[data-testid=chart-note]'), ['job FINISHED · final watermark MAX', 'job FINISHED · final watermark MAX'],
      `${mode}: watermark charts of a finished job`);
    await screenshot(`job-${mode}`);
  }
  // Unmasked, for the documentation (tools/tidemarkd/dashboard-screenshot.png).
  await page.screenshot({ path: path.join(args.out, 'job-operator-unmasked.png'), fullPage: true });
  const windowsLine = await page.textContent('[data-testid=dag-op][data-op=windows]');
  eq(windowsLine, 'windows in 400 · out 11 (+ late 197) · wm MAX · 197 late', 'operator: the windows line');
  eq(await texts('[data-testid=problem-row] td:first-child'), ['windows'], 'operator: late records per operator');

  // Log and explain of the operator-mode job.
  await show(jids.operator, 'log', '[data-testid=log-lines]');
  const log = await page.textContent('[data-testid=log-lines]');
  eq(log.split('\n')[0], '>>> FIRE window=[5s,6s) count=3 watermark=9.149s', 'log: first line');
  eq(log.split('\n').length, 12, 'log: lines');
  await screenshot('job-operator-log');
  await show(jids.operator, 'explain', '[data-testid=explain]');
  const explain = await page.textContent('[data-testid=explain]');
  eq(explain.split('\n')[0], 'windows#0: input watermark 18.799s at processing time 11.97s (where it stood until end of input reached it)',
    'explain: first line');
  check(explain.includes("likely mistake: the watermark strategy is set after the source: 'assign' follows source 'source'"),
    'explain: names the likely mistake');

  // Checkpoints and the restart of the checkpoint-and-restart job.
  await show(jids.restart, 'checkpoints', '[data-testid=ckpt-row]');
  const counts = await page.$$eval('[data-testid=ckpt-counts] tr:nth-child(2) td', (ts) => ts.map((t) => t.textContent));
  eq(counts, ['20', '20', '0', '0', '1'], 'checkpoints: triggered, completed, failed, restored, restarts');
  const ckpts = await page.$$eval('[data-testid=ckpt-row]', (rs) => rs.map((r) => r.getAttribute('data-id') + ' ' + r.getAttribute('data-status')));
  eq(ckpts, ['20 COMPLETED', '19 COMPLETED', '18 COMPLETED', '17 COMPLETED', '16 COMPLETED', '15 COMPLETED', '14 COMPLETED',
    '13 COMPLETED', '12 COMPLETED', '11 COMPLETED'], 'checkpoints: the last 10, newest first');
  await screenshot('job-restart-checkpoints');
  await show(jids.restart, 'exceptions', '[data-testid=restart-cause]');
  eq(await texts('[data-testid=restart-cause]'),
    ["task windows -> out#0: operator 'windows' failed: injected fault (faults: process) while processing its record 41"], 'exceptions: the restarted attempt\'s cause');
  eq(await page.$$eval('[data-testid=no-exception]', (ns) => ns.length), 1, 'exceptions: no root exception for a finished job');

  // The failing job: its root exception.
  await show(jids.fails, 'exceptions', '[data-testid=root-exception]');
  eq(await page.textContent('[data-testid=root-exception]'),
    "task windows -> out#0: operator 'windows' failed: injected fault (faults: process) while processing its record 41", 'exceptions: root exception of the failed job');
  await screenshot('job-fails-exceptions');

  // Input errors of the bad-input job, per source, with the first bad place.
  await show(jids.bad, '', '[data-testid=problem-row]');
  const problems = await page.$$eval('[data-testid=problem-row]', (rs) => rs.map((r) => [...r.querySelectorAll('td')].map((t) => t.textContent)));
  eq(problems, [['source', '4', '0', '0', '0', 'jobs/data/bad_input.csv:3: expected 3 fields, got 2']], 'bad input: errors per source');
  await screenshot('job-bad-input');

  // The long job: its split rows update while it runs; then cancel it from the page.
  await page.goto(url + '#/job/' + jids.long);
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=split-row]')]
    .map((r) => r.getAttribute('data-split')).join() === 'early,late');
  const records = async () => page.$$eval('[data-testid=split-row]', (rs) =>
    rs.map((r) => [r.getAttribute('data-split'), Number(r.getAttribute('data-records'))]));
  const first = await records();
  eq(first.map((r) => r[0]), ['early', 'late'], 'long: split rows');
  await page.waitForFunction((before) => {
    const rows = [...document.querySelectorAll('[data-testid=split-row]')];
    return rows.length === 2 && rows.every((r, i) => Number(r.getAttribute('data-records')) > before[i][1]);
  }, first);
  const second = await records();
  check(second.every((r, i) => r[1] > first[i][1]), `long: split records grew ${JSON.stringify(first)} -> ${JSON.stringify(second)}`);
  const splitStates = await page.$$eval('[data-testid=split-state]', (ns) => ns.map((n) => n.textContent));
  eq(splitStates, ['active', 'active'], 'long: split states');
  await page.waitForFunction(() => [...document.querySelectorAll('[data-testid=wm-chart] polyline')].length > 0);
  // The chart has a time axis (HH:MM:SS ticks) and watermark values (the split starts at 0 s).
  const ticks = await texts('[data-testid=wm-chart] text.xtick');
  check(ticks.length >= 3 && ticks.every((t) => /^\d\d:\d\d:\d\d$/.test(t)), `long: chart time axis ${JSON.stringify(ticks)}`);
  const yticks = await texts('[data-testid=wm-chart] text.ytick');
  check(yticks.length >= 2 && yticks.every((t) => /^\d+(\.\d+)?s$/.test(t)), `long: chart watermark values ${JSON.stringify(yticks)}`);
  await page.screenshot({ path: path.join(args.out, 'job-long.png'), fullPage: true });
  await page.click('[data-testid=cancel]');
  await page.waitForFunction(() => document.querySelector('[data-testid=job-state]')?.textContent === 'CANCELED');
  check(true, 'long: canceled from the page');

  // Every API request carried the token as a header, none in a URL.
  const api = requests.filter((r) => !/\/(dashboard\.(js|css))?$/.test(new URL(r.url).pathname));
  check(api.length > 0 && api.every((r) => r.auth === 'Bearer ' + token),
    `API requests send the bearer token (${api.length})`);
  check(requests.every((r) => !r.url.includes(token)), 'no token in any URL');
} catch (e) {
  console.log('FAIL ' + (e.stack || e));
  failures++;
  if (page) {
    console.log('page status: ' + (await page.textContent('#status').catch(() => '?')));
    console.log('page text: ' + (await page.textContent('main').catch(() => '?')).slice(0, 2000));
    await page.screenshot({ path: path.join(args.out, 'failure.png'), fullPage: true }).catch(() => {});
  }
} finally {
  if (browser) await browser.close();
  daemon.kill('SIGTERM');
  fs.rmSync(dir, { recursive: true, force: true });
}
console.log(failures === 0 ? 'dashboard browser test passed' : `${failures} check(s) failed`);
process.exit(failures === 0 ? 0 : 1);
