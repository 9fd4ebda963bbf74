// Charts shared by the console and the benchmark report, all drawn by uPlot (global `uPlot`,
// served from node_modules/uplot): time plots with the timeline's events as vertical marks, and
// bar charts of benchmark figures, one bar per run.
/* global uPlot */

const COLORS = ['#2a7de1', '#2a9d5f', '#e0a100', '#c0392b', '#8e44ad', '#16a085', '#d35400', '#7f8c8d'];
export const color = (i) => COLORS[i % COLORS.length];

/** A time plot; marks: [{t (s), kind}] drawn as vertical lines (console actions red, others grey). */
export function timePlot(el, title, series, { unit = '', width } = {}) {
  let marks = [];
  const opts = {
    title,
    width: width ?? Math.max(400, el.clientWidth || 700),
    height: 170,
    scales: { x: { time: true } },
    series: [{}, ...series.map((s, i) => ({ label: s.label, stroke: s.color ?? color(i), width: 1.5, spanGaps: false, value: (u, v) => (v == null ? '–' : `${v.toFixed(v < 10 ? 2 : 0)}${unit}`) }))],
    axes: [{}, { label: unit.trim(), size: 55 }],
    hooks: {
      draw: [(u) => {
        const { ctx } = u;
        const [x0, x1] = [u.scales.x.min, u.scales.x.max];
        ctx.save();
        for (const m of marks) {
          if (m.t < x0 || m.t > x1) continue;
          const x = Math.round(u.valToPos(m.t, 'x', true));
          ctx.strokeStyle = m.kind === 'console' ? 'rgba(192,57,43,0.8)' : 'rgba(100,100,100,0.35)';
          ctx.lineWidth = m.kind === 'console' ? 2 : 1;
          ctx.beginPath();
          ctx.moveTo(x, u.bbox.top);
          ctx.lineTo(x, u.bbox.top + u.bbox.height);
          ctx.stroke();
        }
        ctx.restore();
      }],
    },
  };
  const plot = new uPlot(opts, [[], ...series.map(() => [])], el);
  return {
    plot,
    setData(data, newMarks = marks) {
      marks = newMarks;
      plot.setData(data);
    },
    resize(w) {
      plot.setSize({ width: w, height: 170 });
    },
  };
}

/** Bars, one per run: labels[i] is run i's name, values[i] its figure (null: the run lacks it). */
export function barChart(el, title, labels, values, unit = '') {
  const xs = labels.map((_, i) => i);
  const ys = values.map((v) => (v == null || Number.isNaN(v) ? null : v));
  const box = document.createElement('div');
  box.className = 'bar';
  el.appendChild(box);
  const bars = uPlot.paths.bars({ size: [0.6, 80] });
  return new uPlot({
    title, width: 300, height: 200,
    scales: { x: { time: false, range: [-0.5, labels.length - 0.5] }, y: { range: (u, min, max) => [0, max > 0 ? max * 1.15 : 1] } },
    legend: { show: false },
    series: [{}, { label: title, fill: 'rgba(42,125,225,0.6)', stroke: '#2a7de1', paths: bars, points: { show: false } }],
    axes: [
      { values: (u, splits) => splits.map((s) => (Number.isInteger(s) ? labels[s] ?? '' : '')), splits: () => xs, rotate: 0, size: 40 },
      { label: unit, size: 55 },
    ],
    hooks: {
      draw: [(u) => {
        const { ctx } = u;
        ctx.save();
        ctx.fillStyle = '#1d2330';
        ctx.font = `${Math.round(11 * devicePixelRatio)}px system-ui`;
        ctx.textAlign = 'center';
        ys.forEach((v, i) => {
          if (v == null) return;
          const x = u.valToPos(i, 'x', true);
          const y = u.valToPos(v, 'y', true) - 4;
          ctx.fillText(v >= 100 ? v.toFixed(0) : v.toPrecision(3), x, y);
        });
        ctx.restore();
      }],
    },
  }, [xs, ys], box);
}

const med = (xs) => {
  if (!xs?.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};
const get = (o, path) => path.split('.').reduce((x, k) => (x == null ? undefined : x[k]), o);

/**
 * The figures a run file holds, by group: [{group, title, unit, value}]. Files of bench:orders
 * (`bench: 'orders'`) and bench:mpc (`bench: 'mpc'`), each written with --json FILE.
 */
export function figuresOf(run) {
  const out = [];
  const add = (group, title, unit, value) => {
    if (typeof value === 'number' && Number.isFinite(value)) out.push({ group, title, unit, value });
  };
  if (run.bench === 'orders') {
    add('throughput', 'acknowledged / s (sustained)', '/s', get(run, 'sustained.ackPerSec'));
    add('throughput', 'matched / s (sustained)', '/s', get(run, 'sustained.matchedPerSec'));
    add('throughput', 'plaintext ops / s', '/s', get(run, 'plaintext.opsPerSec'));
    add('latency', 'ack p50 (sustained)', 'ms', get(run, 'sustained.ackP50Ms'));
    add('latency', 'ack p99 (sustained)', 'ms', get(run, 'sustained.ackP99Ms'));
    for (const [rate, f] of Object.entries(run.fill ?? {})) {
      add('latency', `order-to-fill p50 at ${rate}/s`, 'ms', f?.p50Ms);
      add('latency', `order-to-fill p99 at ${rate}/s`, 'ms', f?.p99Ms);
    }
    add('latency', `order-to-fill p50, ${get(run, 'degraded.down')?.length ?? 2} nodes down`, 'ms', get(run, 'degraded.p50Ms'));
    for (const [kind, k] of Object.entries(get(run, 'mix.kinds') ?? {})) add('latency', `mix ${kind} p50`, 'ms', k?.p50Ms);
    add('stall', 'kill in flight: to next fill (median)', 'ms', med(get(run, 'stall.inFlight')?.map((r) => r.stall)));
    add('stall', 'kill in flight: added by the kill (median)', 'ms', med(get(run, 'stall.inFlight')?.map((r) => r.stall - r.base)));
    add('stall', 'kill while resting: to next fill (median)', 'ms', med(get(run, 'stall.resting')));
  } else if (run.bench === 'mpc') {
    for (const s of run.sections ?? []) {
      add('throughput', `${s.where}: random bits / s`, '/s', s.preprocessing?.bitsPerSec);
      add('throughput', `${s.where}: triples / s`, '/s', s.preprocessing?.triplesPerSec);
      for (const m of s.mul ?? []) add('throughput', `${s.where}: mul x${m.k} / s`, '/s', m.perSec);
      for (const l of s.lt ?? []) add('throughput', `${s.where}: lt x${l.k} / s`, '/s', l.perSec);
      add('latency', `${s.where}: single lt p50`, 'ms', s.ltLatency?.p50Ms);
      add('latency', `${s.where}: single lt p99`, 'ms', s.ltLatency?.p99Ms);
      add('stall', `${s.where}: single lt max`, 'ms', s.ltLatency?.maxMs);
    }
  }
  return out;
}

/** A run's short name: its file name, else its bench and start time. */
export const runName = (run, i) => run.__file ?? `${run.bench ?? 'run'} ${i + 1}`;

/**
 * Draws runs side by side into `root`: for each group (throughput, latency, stall) one bar chart
 * per figure, a bar per run that has it.
 */
export function drawRuns(root, runs) {
  root.replaceChildren();
  const names = runs.map(runName);
  const byRun = runs.map(figuresOf);
  const titles = new Map();
  byRun.forEach((fs) => fs.forEach((f) => titles.set(f.title, f)));
  if (titles.size === 0) {
    const p = document.createElement('p');
    p.className = 'note';
    p.textContent = 'no figures found: give files written by bench:orders or bench:mpc with --json FILE';
    root.appendChild(p);
    return;
  }
  for (const group of ['throughput', 'latency', 'stall']) {
    const inGroup = [...titles.values()].filter((f) => f.group === group);
    if (inGroup.length === 0) continue;
    const h = document.createElement('h2');
    h.textContent = group;
    root.appendChild(h);
    const grid = document.createElement('div');
    grid.className = 'bars';
    grid.dataset.group = group;
    root.appendChild(grid);
    for (const f of inGroup) {
      const values = byRun.map((fs) => fs.find((x) => x.title === f.title)?.value ?? null);
      barChart(grid, f.title, names, values, f.unit);
    }
  }
}
