// The dashboard's browser test (issue 15): starts tidemarkd on a private socket and a loopback TCP
// port with a bearer token, opens the dashboard in headless Chromium, gives it the token once,
// submits the two two-split jobs and a long-running job from the page, and checks what the page
// shows: the DAG's vertices and edges, each vertex's final watermark, the late count 197 of the
// operator-mode job, the per-split rows of the long job updating, and cancel from the page.
// Saves screenshots.
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
  jids.long = await submit(LONG_JOB, 'long.yaml');

  // The job list shows all three with their state.
  await page.waitForFunction((ids) => ids.every((id) => {
    const row = document.querySelector(`[data-testid=job-row][data-jid="${id}"] [data-testid=job-state]`);
    return row && row.textContent === 'FINISHED';
  }), [jids.split, jids.operator]);
  eq(await page.locator('[data-testid=job-row]').count(), 3, 'jobs listed');
  await page.screenshot({ path: path.join(args.out, 'jobs.png'), fullPage: true });

  const expected = {
    split: { nodes: ['source', 'windows'], chains: ['source', 'windows → fired → late'], late: '0' },
    operator: { nodes: ['source', 'windows'], chains: ['source → assign', 'windows → fired → late'], late: '197' },
  };
  for (const mode of ['split', 'operator']) {
    await page.goto(url + '#/job/' + jids[mode]);
    await page.waitForSelector('[data-testid=dag-node]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=subtask-row]').length > 0);
    const nodes = await page.$$eval('[data-testid=dag-node]', (ns) => ns.map((n) => n.getAttribute('data-vid')));
    eq(nodes, expected[mode].nodes, `${mode}: DAG vertices`);
    const titles = await page.$$eval('[data-testid=dag-node] text.title', (ns) => ns.map((n) => n.textContent));
    eq(titles, expected[mode].chains, `${mode}: chained operators`);
    const edges = await page.$$eval('[data-testid=dag-edge]', (es) => es.map((e) =>
      e.getAttribute('data-from') + '->' + e.getAttribute('data-to') + ' ' + e.querySelector('text').textContent));
    eq(edges, ['source->windows HASH'], `${mode}: DAG edges`);
    const wms = await page.$$eval('[data-testid=node-watermark]', (ns) => ns.map((n) => n.textContent));
    eq(wms, ['watermark MAX', 'watermark MAX'], `${mode}: each vertex's final watermark`);
    const late = await page.$eval('[data-testid=subtask-row][data-vid=windows]', (r) => r.getAttribute('data-late'));
    eq(late, expected[mode].late, `${mode}: late records`);
    eq(await page.textContent('[data-testid=job-state]'), 'FINISHED', `${mode}: state`);
    await page.screenshot({ path: path.join(args.out, `job-${mode}.png`), fullPage: true });
  }

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
