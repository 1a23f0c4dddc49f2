// Charts: the options every chart of the page shares, and a trade on a candle chart — its
// candles, the entry and target lines, the stop line stepping at the very time each stop was
// placed (not at the next candle), and markers at the entry and the exit.
'use strict';

const COLORS = {
  up: '#3fb950', down: '#f85149', entry: '#8b949e', sl: '#f85149', tp: '#3fb950', pnl: '#d29922',
  exit: '#58a6ff',
};

const chartHeight = () => (window.innerWidth <= 720 ? 200 : 260);

function chartOptions(target, series) {
  const axis = { stroke: '#8b949e', grid: { stroke: '#222a33' }, ticks: { stroke: '#222a33' } };
  return {
    width: Math.max(240, target.clientWidth || 320),
    height: chartHeight(),
    scales: { x: { time: true } },
    series: [{}, ...series],
    axes: [axis, { ...axis, size: 70 }],
    legend: { live: false },
  };
}

/** Sets `data` and widens the x axis to at least an hour around it: uPlot's own range for
 * one point (or points a few seconds apart) spans years. */
function plotData(plot, data) {
  plot.setData(data);
  const xs = data[0];
  if (xs.length === 0 || xs[xs.length - 1] - xs[0] >= 3600) return;
  const mid = (xs[0] + xs[xs.length - 1]) / 2;
  plot.setScale('x', { min: mid - 1800, max: mid + 1800 });
}

/** The line key of a trade chart's title. */
function chartKey() {
  const key = el('span', null, 'key');
  for (const [name, color] of [['entry', COLORS.entry], ['stop', COLORS.sl], ['target', COLORS.tp], ['exit', COLORS.exit]]) {
    const item = el('span', ' ― ' + name);
    item.style.color = color;
    key.append(item);
  }
  return key;
}

/** The stop in force at each time (ms): the last stop placed at or before it. */
function stopLine(times, stops, fallback) {
  let i = 0;
  let current = stops.length ? stops[0].price : fallback;
  return times.map((t) => {
    while (i < stops.length && stops[i].time <= t) current = stops[i++].price;
    return current;
  });
}

/** The chart's data: x is every candle's time and every stop move and mark inside the
 * candles' span, so the stop line steps when the stop moved. `model`: candles, stops, entry_px,
 * sl_px, tp_px (null: no line), marks [{time, price, kind}]. */
function tradeChartData(model) {
  const candles = model.candles;
  const first = candles.length ? candles[0].time : -Infinity;
  const inside = (t) => t >= first;
  const times = [...new Set([
    ...candles.map((c) => c.time),
    ...model.stops.map((s) => s.time).filter(inside),
    ...model.marks.map((m) => m.time).filter(inside),
  ])].sort((a, b) => a - b);
  const byTime = new Map(candles.map((c) => [c.time, c]));
  const at = (t, field) => (byTime.has(t) ? byTime.get(t)[field] : null);
  return [
    times.map((t) => t / 1000),
    times.map((t) => at(t, 'high')),
    times.map((t) => at(t, 'low')),
    times.map(() => model.entry_px),
    stopLine(times, model.stops, model.sl_px),
    times.map(() => model.tp_px),
  ];
}

/** Draws `chart.model`'s candles (wick and body) under the lines, each at its own time. */
function candlePlugin(chart) {
  return { hooks: { drawAxes: (u) => {
    const candles = chart.model.candles;
    if (candles.length === 0) return;
    const ctx = u.ctx;
    const x = (t) => u.valToPos(t / 1000, 'x', true);
    const y = (v) => u.valToPos(v, 'y', true);
    const step = candles.length > 1 ? (x(candles[candles.length - 1].time) - x(candles[0].time)) / (candles.length - 1) : 8;
    const body = Math.max(1, step * 0.6);
    ctx.save();
    ctx.beginPath();
    ctx.rect(u.bbox.left, u.bbox.top, u.bbox.width, u.bbox.height);
    ctx.clip();
    for (const k of candles) {
      ctx.strokeStyle = ctx.fillStyle = k.close >= k.open ? COLORS.up : COLORS.down;
      ctx.lineWidth = 1;
      ctx.beginPath();
      ctx.moveTo(Math.round(x(k.time)), y(k.high));
      ctx.lineTo(Math.round(x(k.time)), y(k.low));
      ctx.stroke();
      const top = Math.min(y(k.open), y(k.close));
      ctx.fillRect(x(k.time) - body / 2, top, body, Math.max(1, Math.abs(y(k.open) - y(k.close))));
    }
    ctx.restore();
  } } };
}

/** Draws a triangle at each mark over the series: up at the entry, down at the exit. */
function markPlugin(chart) {
  return { hooks: { draw: (u) => {
    const ctx = u.ctx;
    const size = 7 * devicePixelRatio;
    ctx.save();
    for (const m of chart.model.marks) {
      const px = u.valToPos(m.time / 1000, 'x', true);
      const py = u.valToPos(m.price, 'y', true);
      if (px < u.bbox.left || px > u.bbox.left + u.bbox.width) continue;
      const down = m.kind === 'exit';
      ctx.fillStyle = down ? COLORS.exit : COLORS.entry;
      ctx.strokeStyle = '#0f1419';
      ctx.beginPath();
      ctx.moveTo(px, py);
      ctx.lineTo(px - size, py + (down ? -size * 1.6 : size * 1.6));
      ctx.lineTo(px + size, py + (down ? -size * 1.6 : size * 1.6));
      ctx.closePath();
      ctx.fill();
      ctx.stroke();
    }
    ctx.restore();
  } } };
}

/** A trade on a candle chart in `target`; `update` redraws it with a new model. */
class TradeChart {
  constructor(target, model) {
    this.model = model;
    const hidden = { paths: () => null, points: { show: false } };
    const options = chartOptions(target, [
      { label: 'High', ...hidden, spanGaps: true },
      { label: 'Low', ...hidden, spanGaps: true },
      { label: 'Entry', stroke: COLORS.entry, dash: [4, 4], points: { show: false } },
      { label: 'SL', stroke: COLORS.sl, paths: uPlot.paths.stepped({ align: 1 }), points: { show: false } },
      { label: 'TP', stroke: COLORS.tp, dash: [4, 4], points: { show: false } },
    ]);
    options.legend = { show: false };
    options.plugins = [candlePlugin(this), markPlugin(this)];
    const data = tradeChartData(model);
    this.plot = new uPlot(options, data, target);
    plotData(this.plot, data);
  }

  update(model) {
    this.model = model;
    plotData(this.plot, tradeChartData(model));
  }
}
