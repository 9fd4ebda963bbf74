// The console page: one event stream from the console server (a snapshot a second, timeline
// entries as they happen), tiles per process, flow plots, leakage table, chaos and link controls.
import { timePlot } from './charts.js';

const $ = (sel) => document.querySelector(sel);
const el = (tag, props = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (k === 'dataset') Object.assign(e.dataset, v);
    else if (k === 'class') e.className = v;
    else e[k] = v;
  }
  for (const k of kids) e.append(k);
  return e;
};
const fmt = (v, digits = 0) => (v == null || Number.isNaN(v) ? '–' : Number(v).toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: 0 }));
const bytes = (v) => (v == null ? '–' : v >= 1e6 ? `${(v / 1e6).toFixed(1)} MB` : v >= 1e3 ? `${(v / 1e3).toFixed(1)} kB` : `${v.toFixed(0)} B`);

let n = 5;
let history = [];
let events = [];
let latest = null;
let plots = null;

async function act(role, index, action) {
  const r = await fetch('/api/control', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ role, index, action }) });
  const body = await r.json().catch(() => ({}));
  if (r.status !== 200) alert(body.message ?? `${action} failed: ${r.status}`);
}

// Tiles are made once per process and updated in place: buttons stay put under the pointer (a
// re-made button would slip from under a click), only the figures are rewritten each second.
const tiles = new Map();

function tile(role, index, title, state, pid, body) {
  const key = `${role}:${index}`;
  let t = tiles.get(key);
  if (!t) {
    const btn = (action) => el('button', { type: 'button', dataset: { action }, onclick: () => void act(role, index, action) });
    const buttons = { kill: btn('kill'), restart: btn('restart'), freeze: btn('freeze'), thaw: btn('thaw') };
    buttons.kill.textContent = 'kill -9';
    buttons.freeze.textContent = 'freeze (SIGSTOP)';
    buttons.thaw.textContent = 'thaw (SIGCONT)';
    const name = el('span');
    const badge = el('span', { class: 'state' });
    const pidLine = el('div', { class: 'pid' });
    const figures = el('div');
    const root = el('div', { class: 'tile', dataset: { role, index: String(index) } },
      el('h3', {}, name, badge), pidLine, figures, el('div', { class: 'actions' }, ...Object.values(buttons)));
    t = { root, name, badge, pidLine, figures, buttons };
    tiles.set(key, t);
  }
  t.root.dataset.state = state;
  t.name.textContent = title;
  t.badge.textContent = state;
  t.pidLine.textContent = pid ? `pid ${pid}` : 'no process';
  t.figures.replaceChildren(...body);
  t.buttons.kill.disabled = state === 'down';
  t.buttons.restart.textContent = state === 'down' ? 'start' : 'restart';
  t.buttons.freeze.hidden = state === 'frozen';
  t.buttons.freeze.disabled = state === 'down';
  t.buttons.thaw.hidden = state !== 'frozen';
  return t.root;
}

function dl(pairs) {
  return el('dl', {}, ...pairs.flatMap(([k, v]) => [el('dt', { textContent: k }), el('dd', { textContent: v })]));
}

function nodeTile(nd) {
  const links = el('table', { class: 'links' },
    el('tr', {}, ...['peer', 'tx/s', 'rx/s', 'msg/s', 'queue'].map((h) => el('td', { textContent: h }))),
    ...nd.peers.map((p) => el('tr', { dataset: { peer: String(p.peer), up: String(p.up) } },
      el('td', { class: p.up ? '' : 'down', textContent: `${p.peer} ${p.up ? 'up' : 'down'}` }),
      el('td', { textContent: bytes(p.txBytesPerS) }), el('td', { textContent: bytes(p.rxBytesPerS) }),
      el('td', { textContent: fmt(p.txMsgsPerS + p.rxMsgsPerS) }), el('td', { textContent: fmt(p.queued) }))));
  const r = nd.reserve;
  const emu = linkSettings.get(nd.index);
  return tile('committee', nd.index, `node ${nd.index}`, nd.state, nd.pid, [
    dl([
      ['reserve', r ? `${fmt(r.bits)} bits, ${fmt(r.lex4)} lex4, ${fmt(r.prod4)} prod4, ${fmt(r.triples)} triples` : '–'],
      ['covers', nd.opsLeft == null ? '–' : `${fmt(nd.opsLeft)} orders`],
      ['production', nd.production == null ? '–' : `${nd.production}${nd.exhausted ? ', EXHAUSTED' : ''}`],
      ['rounds/s', fmt(nd.roundsPerS)],
      ['jobs/s · ops/s', `${fmt(nd.jobsPerS, 1)} · ${fmt(nd.opsPerS, 1)}`],
      ['job in flight', nd.appliedSeq == null ? '–' : `after seq ${fmt(nd.appliedSeq)}, ${fmt(nd.pendingOps)} ops waiting`],
      ['quorum', nd.quorum == null ? '–' : nd.quorum ? 'yes' : 'NO'],
      ['cpu', nd.cpu == null ? '–' : `${fmt(nd.cpu)} %`],
      ...(emu && nd.state !== 'down' ? [['emulated', `${emu.latency_ms} ms ± ${emu.jitter_ms}, ${emu.bandwidth_mbps == null ? '∞' : `${emu.bandwidth_mbps} Mbit/s`}${emu.blocked_peers.length ? `, cut ${emu.blocked_peers.join(',')}` : ''}`]] : []),
    ]),
    links,
  ]);
}

/** Puts the tiles in a row, moving none that is already in place. */
function place(row, els) {
  els.forEach((e, i) => {
    if (row.children[i] !== e) row.insertBefore(e, row.children[i] ?? null);
  });
  while (row.children.length > els.length) row.lastChild.remove();
}

function renderTiles(s) {
  place($('#nodes'), s.nodes.map(nodeTile));
  const q = s.sequencer;
  const g = s.gateway;
  place($('#services'), [
    tile('sequencer', 0, 'sequencer', q.state, q.pid, [dl([
      ['last seq', fmt(q.lastSeq)], ['journaled/s', fmt(q.opsPerS, 1)],
      ['group commit', q.groupOps == null ? '–' : `${fmt(q.groupOps, 1)} ops in ${fmt(q.commitMs, 2)} ms`],
      ['cpu', q.cpu == null ? '–' : `${fmt(q.cpu)} %`],
    ])]),
    tile('gateway', 0, 'gateway', g.state, g.pid, [dl([
      ['health', g.health ?? '–'], ['acks/s', fmt(g.ackedPerS, 1)], ['ack p50 · p99', `${fmt(g.ackP50Ms, 2)} · ${fmt(g.ackP99Ms, 2)} ms`],
      ['fills/s', fmt(g.fillsPerS, 1)], ['queued/s · refused/s', `${fmt(g.queuedPerS, 1)} · ${fmt(g.refusedPerS, 1)}`],
      ['nodes linked', g.liveNodes == null ? '–' : `${g.liveNodes} of ${n}`], ['sequencer link', g.sequencerUp == null ? '–' : g.sequencerUp ? 'up' : 'DOWN'],
      ['reserve covers', g.ordersLeft == null ? '–' : `${fmt(g.ordersLeft)} orders (${g.preprocessing})`],
      ['cpu', g.cpu == null ? '–' : `${fmt(g.cpu)} %`],
    ])]),
  ]);
  const up = s.nodes.filter((x) => x.state === 'up').length;
  $('#summary').textContent = `${up} of ${n} nodes up · last seq ${fmt(q.lastSeq)} · ${fmt(g.ackedPerS, 1)} acks/s · ${fmt(s.flow.matched, 1)} matches/s`;
}

function renderLeakage(s) {
  $('#leakage tbody').replaceChildren(...s.leakage.map((l) => el('tr', { dataset: { label: l.label } },
    el('td', { textContent: l.label }), el('td', { textContent: fmt(l.perS, 1) }), el('td', { textContent: fmt(l.total) }))));
}

function renderTimeline() {
  $('#timeline').replaceChildren(...events.slice(-200).reverse().map((e) => el('li', { class: `src-${e.source}`, dataset: { who: e.who, source: e.source } },
    el('time', { textContent: new Date(e.time).toLocaleTimeString() }), `${e.who}: ${e.what}`)));
}

function marks() {
  return events.filter((e) => e.source !== 'state').map((e) => ({ t: e.time / 1000, kind: e.source }));
}

function ensurePlots() {
  if (plots) return;
  const w = $('#plot-orders').clientWidth || 800;
  plots = {
    orders: timePlot($('#plot-orders'), 'orders per second', [{ label: 'acknowledged' }, { label: 'matched' }, { label: 'queued (202)' }], { unit: '/s', width: w }),
    latency: timePlot($('#plot-latency'), 'order-to-fill latency (incoming orders, last 10 s)', [{ label: 'p50' }, { label: 'p99' }], { unit: ' ms', width: w }),
    symbol: timePlot($('#plot-symbol'), 'per instrument: fills/s and order-to-fill p50 (ms)', [{ label: 'fills/s' }, { label: 'p50 ms' }], { width: w }),
    mpc: timePlot($('#plot-mpc'), 'committee: rounds per second and openings per second', [{ label: 'rounds/s' }, { label: 'openings/s' }], { unit: '/s', width: w }),
  };
}

function renderPlots() {
  ensurePlots();
  const t = history.map((p) => p.t);
  const m = marks();
  plots.orders.setData([t, history.map((p) => p.acked), history.map((p) => p.matched), history.map((p) => p.queued)], m);
  plots.latency.setData([t, history.map((p) => p.fillP50Ms), history.map((p) => p.fillP99Ms)], m);
  plots.mpc.setData([t, history.map((p) => p.roundsPerS), history.map((p) => p.openingsPerS)], m);
  const sym = $('#symbol').value;
  const seen = new Set(history.flatMap((p) => Object.keys(p.bySymbol ?? {})));
  const have = new Set([...$('#symbol').options].map((o) => o.value));
  for (const s of seen) if (!have.has(s)) $('#symbol').append(el('option', { value: s, textContent: s }));
  $('#plot-symbol').hidden = !sym;
  if (sym) plots.symbol.setData([t, history.map((p) => p.bySymbol?.[sym]?.fills ?? null), history.map((p) => p.bySymbol?.[sym]?.p50Ms ?? null)], m);
}

const linkSettings = new Map();
function renderLinks(links) {
  if (!links?.available) {
    $('#links-unavailable').hidden = false;
    $('#links-unavailable').textContent = `Link control not available: ${links?.why ?? 'unknown'}.`;
    $('#links-form').hidden = true;
    return;
  }
  $('#links-form').hidden = false;
  for (const s of links.current ?? []) linkSettings.set(s.node, s);
}

$('#links-form').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const body = { latency_ms: Number(f.get('latency_ms') || 0), jitter_ms: Number(f.get('jitter_ms') || 0), bandwidth_mbps: f.get('bandwidth_mbps') ? Number(f.get('bandwidth_mbps')) : null };
  // a node busy or starting is asked again for a while (links.ts): say so meanwhile
  $('#links-result').textContent = 'applying…';
  const r = await fetch('/api/links', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const a = await r.json().catch(() => ({}));
  if (r.status !== 200) {
    $('#links-result').textContent = a.message ?? `failed: ${r.status}`;
    return;
  }
  for (const x of a.data.results) if (x.ok) linkSettings.set(x.node, x.settings);
  const bad = a.data.results.filter((x) => !x.ok);
  $('#links-result').textContent = bad.length ? `not applied at ${bad.map((x) => `node ${x.node} (${x.error})`).join(', ')}` : 'applied at every node';
});
$('#symbol').addEventListener('change', () => renderPlots());
window.addEventListener('resize', () => {
  if (!plots) return;
  const w = $('#plot-orders').clientWidth;
  for (const p of Object.values(plots)) p.resize(w);
});

function connect() {
  const es = new EventSource('/api/events');
  es.addEventListener('open', () => {
    $('#conn').textContent = 'live';
    $('#conn').className = 'pill live';
  });
  es.addEventListener('error', () => {
    $('#conn').textContent = 'reconnecting…';
    $('#conn').className = 'pill lost';
  });
  es.addEventListener('state', (m) => {
    const s = JSON.parse(m.data);
    n = s.n;
    history = s.history;
    events = s.events;
    renderLinks(s.links);
    renderTimeline();
    if (s.snapshot) update(s.snapshot, false);
    else renderPlots();
  });
  es.addEventListener('snapshot', (m) => update(JSON.parse(m.data), true));
  es.addEventListener('timeline', (m) => {
    events.push(JSON.parse(m.data));
    if (events.length > 1000) events.shift();
    renderTimeline();
  });
}

function update(s, append) {
  latest = s;
  if (append) {
    history.push(s.flow);
    if (history.length > 600) history.shift();
  }
  renderTiles(s);
  renderLeakage(s);
  renderPlots();
  document.body.dataset.updated = String(s.time);
}

connect();
export { latest };
