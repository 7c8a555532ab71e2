// agentlake dashboard: draws the charts with BokehJS (inlined in the page) and fills them,
// the figures and the session table from the embedded data for the provider and the
// stacking chosen, with no server. When done, <body> carries data-charts (the figures
// drawn) and data-rendered (how many times the data was filled), or data-error.
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("agentlake-data").textContent);
  var DAY_MS = 86400000;
  var WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"];
  var state = { provider: -1, stack: "provider" };
  var integer = new Intl.NumberFormat("en-US");
  var compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 });

  function usd(value, digits) {
    if (value === null || value === undefined) return "n/a";
    return "$" + value.toLocaleString("en-US", {
      minimumFractionDigits: 2, maximumFractionDigits: digits === undefined ? 2 : digits,
    });
  }

  function shown(p) { return state.provider < 0 || p === state.provider; }

  function zeros(n) { var a = new Array(n); for (var i = 0; i < n; i++) a[i] = 0; return a; }

  // Days with calls, oldest first, and each one's sums per stack key.
  function daily() {
    var d = DATA.days, keysOf = { provider: DATA.stacks.provider.length, model: DATA.stacks.model.length };
    var index = new Map(), days = [];
    for (var i = 0; i < d.day.length; i++) {
      if (!shown(d.p[i])) continue;
      var row = index.get(d.day[i]);
      if (!row) {
        row = { day: d.day[i], calls: 0, input: 0, cache_write: 0, cache_read: 0, output: 0,
                cost: 0, uncached: 0, unpriced: 0,
                tokens: { provider: zeros(keysOf.provider), model: zeros(keysOf.model) },
                costs: { provider: zeros(keysOf.provider), model: zeros(keysOf.model) } };
        index.set(d.day[i], row); days.push(row);
      }
      var tokens = d.input[i] + d.cache_write[i] + d.cache_read[i] + d.output[i];
      var cost = d.cost[i] || 0, m = DATA.model_stack[d.m[i]];
      row.calls += d.calls[i]; row.input += d.input[i]; row.cache_write += d.cache_write[i];
      row.cache_read += d.cache_read[i]; row.output += d.output[i];
      row.cost += cost; row.uncached += d.uncached[i] || 0; row.unpriced += d.unpriced[i];
      row.tokens.provider[d.p[i]] += tokens; row.tokens.model[m] += tokens;
      row.costs.provider[d.p[i]] += cost; row.costs.model[m] += cost;
    }
    days.sort(function (a, b) { return a.day - b.day; });
    return days;
  }

  function stackColumns(days, kind) {
    var n = DATA.stacks[kind].length, cols = { x: [], tt: [], ct: [] }, k;
    for (k = 0; k < n; k++) { cols["t" + k] = []; cols["c" + k] = []; }
    days.forEach(function (row) {
      cols.x.push(row.day * DAY_MS);
      cols.tt.push(row.input + row.cache_write + row.cache_read + row.output);
      cols.ct.push(row.cost);
      for (k = 0; k < n; k++) {
        cols["t" + k].push(row.tokens[kind][k]);
        cols["c" + k].push(row.costs[kind][k]);
      }
    });
    return cols;
  }

  function topProjects(totalCost) {
    var pr = DATA.projects, by = new Map();
    for (var i = 0; i < pr.project.length; i++) {
      if (!shown(pr.p[i])) continue;
      var row = by.get(pr.project[i]);
      if (!row) { row = { name: pr.project[i], cost: 0, tokens: 0, calls: 0, sessions: 0 }; by.set(row.name, row); }
      row.cost += pr.cost[i] || 0; row.tokens += pr.tokens[i]; row.calls += pr.calls[i];
      row.sessions += pr.sessions[i];
    }
    var rows = Array.from(by.values()).sort(function (a, b) {
      return b.cost - a.cost || b.tokens - a.tokens || (a.name < b.name ? -1 : 1);
    }).slice(0, DATA.top);
    return rows.map(function (r) {
      r.label = shortPath(r.name); r.share = totalCost > 0 ? r.cost / totalCost : 0; return r;
    });
  }

  function topSessions(totalCost) {
    return DATA.sessions.filter(function (s) { return shown(s.p); })
      .sort(function (a, b) { return (b.cost || 0) - (a.cost || 0) || b.tokens - a.tokens; })
      .slice(0, DATA.top)
      .map(function (s) {
        s.share = totalCost > 0 ? (s.cost || 0) / totalCost : 0;
        s.short = clip(s.label || s.id, 38);
        return s;
      });
  }

  function shortPath(path) {
    var parts = String(path).split(/[\\/]/).filter(Boolean);
    return parts.length > 2 ? "…/" + parts.slice(-2).join("/") : String(path);
  }

  function clip(text, n) { text = String(text).replace(/\s+/g, " ").trim(); return text.length > n ? text.slice(0, n - 1) + "…" : text; }

  // Distinct axis labels: a repeated one gets a counter.
  function unique(labels) {
    var seen = new Map();
    return labels.map(function (label) {
      var n = (seen.get(label) || 0) + 1; seen.set(label, n);
      return n > 1 ? label + " (" + n + ")" : label;
    });
  }

  // ---- charts (BokehJS): built once, their sources refilled on every change ----
  var PALETTE = ["#1f77b4", "#aec7e8", "#ff7f0e", "#ffbb78", "#2ca02c", "#98df8a", "#d62728",
    "#ff9896", "#9467bd", "#c5b0d5", "#8c564b", "#c49c94", "#e377c2", "#f7b6d2", "#7f7f7f",
    "#c7c7c7", "#bcbd22", "#dbdb8d", "#17becf", "#9edae5"];
  var CACHE_KINDS = [["input", "fresh input", "#4c78a8"], ["cache_write", "cache writes", "#f58518"],
    ["cache_read", "cache reads", "#54a24b"]];
  var MONEY = "$0,0.00[0000]";
  var charts = {};

  function color(kind, k) { return kind === "provider" ? DATA.provider_colors[k] : PALETTE[k % PALETTE.length]; }

  function figure(options) {
    var base = { height: 260, sizing_mode: "stretch_width", tools: "", toolbar_location: null,
                 outline_line_color: null, min_border_left: 8 };
    for (var key in options) base[key] = options[key];
    return Bokeh.Plotting.figure(base);
  }

  function hover(tooltips, extra) {
    var options = { tooltips: tooltips, formatters: { "@x": "datetime" } };
    for (var key in extra || {}) options[key] = extra[key];
    return new Bokeh.HoverTool(options);
  }

  function source(columns) { var data = {}; columns.forEach(function (c) { data[c] = []; }); return new Bokeh.ColumnDataSource({ data: data }); }

  // A stacked bar chart: one bar segment per (day, key), drawn by one glyph.
  function stackedChart(label, format, tickFormat) {
    var src = source(["x", "bottom", "top", "value", "total", "key", "color"]);
    var fig = figure({ x_axis_type: "datetime", y_axis_label: label });
    fig.vbar({ x: { field: "x" }, bottom: { field: "bottom" }, top: { field: "top" }, width: 0.8 * DAY_MS,
               fill_color: { field: "color" }, line_color: null, source: src });
    fig.add_tools(hover([["day", "@x{%F}"], ["", "@key"], ["value", "@value{" + format + "}"], ["day total", "@total{" + format + "}"]]));
    fig.yaxis.formatter = new Bokeh.NumeralTickFormatter({ format: tickFormat });
    return { fig: fig, src: src };
  }

  function barChart(noun, extra) {
    var src = source(["y", "cost", "share", "percent", "tokens", "calls", "extra", "name", "color"]);
    // The range starts at $0 and leaves room after the longest bar for its share.
    var fig = figure({ y_range: new Bokeh.FactorRange({ factors: [] }), x_axis_label: "cost (USD)",
                       x_range: new Bokeh.DataRange1d({ start: 0, range_padding: 0.18 }) });
    fig.hbar({ y: { field: "y" }, right: { field: "cost" }, height: 0.7, fill_color: { field: "color" }, line_color: null, source: src });
    // Each bar's share of the cost, written after it.
    fig.text({ x: { field: "cost" }, y: { field: "y" }, text: { field: "percent" }, x_offset: 4, text_baseline: "middle",
               text_font_size: "11px", text_color: "#52606d", source: src });
    fig.add_tools(hover([[noun, "@name"], ["cost", "@cost{" + MONEY + "}"], ["share", "@share{0.0%}"],
                         ["tokens", "@tokens{0,0}"], ["calls", "@calls{0,0}"], [extra, "@extra{0,0}"]]));
    fig.xaxis.formatter = new Bokeh.NumeralTickFormatter({ format: "$0,0.[00]" });
    fig.ygrid.grid_line_color = null;
    return { fig: fig, src: src };
  }

  function build() {
    charts.tokens = stackedChart("tokens", "0,0", "0.[00]a");
    charts.cost = stackedChart("cost (USD)", MONEY, "$0,0.[00]");
    charts.cache = stackedChart("prompt tokens", "0,0", "0.[00]a");
    var saved = source(["x", "saved", "total", "cost"]);
    var fig = figure({ x_axis_type: "datetime", y_axis_label: "saved (USD)" });
    var bars = fig.vbar({ x: { field: "x" }, top: { field: "saved" }, width: 0.8 * DAY_MS, fill_color: "#54a24b",
                          line_color: null, source: saved, legend_label: "saved that day" });
    var line = fig.line({ x: { field: "x" }, y: { field: "total" }, line_color: "#323f4b", line_width: 2,
                          source: saved, legend_label: "saved in all" });
    fig.add_tools(hover([["day", "@x{%F}"], ["saved that day", "@saved{" + MONEY + "}"],
                         ["saved in all", "@total{" + MONEY + "}"], ["paid that day", "@cost{" + MONEY + "}"]],
                        { renderers: [bars, line], mode: "vline" }));
    fig.yaxis.formatter = new Bokeh.NumeralTickFormatter({ format: "$0,0.[00]" });
    fig.legend.location = "top_left";
    fig.legend.background_fill_alpha = 0.7;
    charts.saved = { fig: fig, src: saved };
    charts.projects = barChart("project", "sessions");
    charts.sessions = barChart("session", "subagents");
    var heat = source(["hour", "weekday", "calls", "tokens", "cost"]);
    var mapper = new Bokeh.LinearColorMapper({ palette: ["#f0f4f8", "#c6dbef", "#9ecae1", "#6baed6", "#4292c6", "#2171b5", "#08519c", "#08306b"], low: 0, high: 1 });
    var hfig = figure({ height: 240, x_range: new Bokeh.Range1d({ start: -0.5, end: 23.5 }),
                        y_range: new Bokeh.FactorRange({ factors: WEEKDAYS.slice().reverse() }), x_axis_label: "hour of the day" });
    hfig.rect({ x: { field: "hour" }, y: { field: "weekday" }, width: 0.95, height: 0.9, line_color: null,
                fill_color: { field: "calls", transform: mapper }, source: heat });
    hfig.add_tools(hover([["when", "@weekday @hour:00"], ["calls", "@calls{0,0}"], ["tokens", "@tokens{0,0}"], ["cost", "@cost{" + MONEY + "}"]]));
    hfig.xaxis.ticker = new Bokeh.FixedTicker({ ticks: [0, 3, 6, 9, 12, 15, 18, 21] });
    hfig.grid.grid_line_color = null;
    charts.hours = { fig: hfig, src: heat, mapper: mapper };
    return Promise.all(["tokens", "cost", "cache", "saved", "projects", "sessions", "hours"].map(function (name) {
      var el = document.getElementById("chart-" + name);
      return Bokeh.Plotting.show(charts[name].fig, el);
    }));
  }

  // The segments of a stacked chart: per day, each key's value on top of the previous.
  function stackRows(days, values, names, colors) {
    var rows = { x: [], bottom: [], top: [], value: [], total: [], key: [], color: [] };
    days.forEach(function (day) {
      var parts = values(day), total = 0, base = 0;
      parts.forEach(function (v) { total += v; });
      parts.forEach(function (v, k) {
        if (!v) return;
        rows.x.push(day.day * DAY_MS); rows.bottom.push(base); rows.top.push(base + v); base += v;
        rows.value.push(v); rows.total.push(total); rows.key.push(names[k]); rows.color.push(colors[k]);
      });
    });
    return rows;
  }

  function bars(chart, rows, label, extra) {
    var labels = unique(rows.map(label));
    chart.src.data = {
      y: labels, cost: rows.map(function (r) { return r.cost || 0; }),
      share: rows.map(function (r) { return r.share; }),
      percent: rows.map(function (r) { return (100 * r.share).toFixed(1) + "%"; }),
      tokens: rows.map(function (r) { return r.tokens; }),
      calls: rows.map(function (r) { return r.calls; }),
      extra: rows.map(extra), name: rows.map(function (r) { return r.name || r.label || r.id; }),
      color: rows.map(function (r) { return r.p === undefined ? "#4c78a8" : DATA.provider_colors[r.p]; }),
    };
    chart.fig.y_range.factors = labels.slice().reverse();
  }

  // Calls per weekday and hour: all 168 cells, empty ones too.
  function hours() {
    var h = DATA.hours, cells = new Map();
    for (var wd = 1; wd <= 7; wd++) for (var hr = 0; hr < 24; hr++) cells.set(wd * 100 + hr, { calls: 0, tokens: 0, cost: 0 });
    for (var i = 0; i < h.p.length; i++) {
      if (!shown(h.p[i])) continue;
      var cell = cells.get(h.weekday[i] * 100 + h.hour[i]);
      cell.calls += h.calls[i]; cell.tokens += h.tokens[i]; cell.cost += h.cost[i] || 0;
    }
    var cols = { hour: [], weekday: [], calls: [], tokens: [], cost: [] }, most = 0;
    cells.forEach(function (cell, key) {
      cols.hour.push(key % 100); cols.weekday.push(WEEKDAYS[Math.floor(key / 100) - 1]);
      cols.calls.push(cell.calls); cols.tokens.push(cell.tokens); cols.cost.push(cell.cost);
      most = Math.max(most, cell.calls);
    });
    charts.hours.mapper.high = Math.max(most, 1);
    charts.hours.src.data = cols;
  }

  function kpis(days) {
    var t = { calls: 0, tokens: 0, cost: 0, uncached: 0, prompt: 0, cache_read: 0, unpriced: 0 };
    days.forEach(function (r) {
      t.calls += r.calls; t.cost += r.cost; t.uncached += r.uncached; t.unpriced += r.unpriced;
      t.tokens += r.input + r.cache_write + r.cache_read + r.output;
      t.prompt += r.input + r.cache_write + r.cache_read; t.cache_read += r.cache_read;
    });
    var sessions = 0;
    DATA.providers.forEach(function (name, p) { if (shown(p)) sessions += DATA.provider_sessions[name] || 0; });
    var cards = [
      ["cost", usd(t.cost), t.unpriced ? integer.format(t.unpriced) + " calls without a price" : "all calls priced"],
      ["tokens", compact.format(t.tokens), integer.format(t.tokens)],
      ["calls", integer.format(t.calls), days.length + " active days"],
      ["sessions", integer.format(sessions), "with calls"],
      ["cache saved", usd(t.uncached - t.cost), "vs. no prompt cache"],
      ["from cache", t.prompt ? (100 * t.cache_read / t.prompt).toFixed(1) + "%" : "n/a", "of prompt tokens"],
    ];
    var box = document.getElementById("kpis");
    box.textContent = "";
    cards.forEach(function (c) {
      var el = document.createElement("div"); el.className = "kpi"; el.dataset.kpi = c[0];
      [["label", c[0]], ["value", c[1]], ["note", c[2]]].forEach(function (part) {
        var span = document.createElement("div"); span.className = part[0]; span.textContent = part[1]; el.appendChild(span);
      });
      box.appendChild(el);
    });
    document.getElementById("empty").hidden = days.length > 0;
    return t;
  }

  function legend(days, colors) {
    var kind = state.stack, names = DATA.stacks[kind];
    var used = zeros(names.length);
    days.forEach(function (r) { r.tokens[kind].forEach(function (v, k) { used[k] += v; }); });
    var list = document.getElementById("legend");
    list.textContent = "";
    names.forEach(function (name, k) {
      if (!used[k]) return;
      var li = document.createElement("li"), sw = document.createElement("i");
      sw.style.background = colors[k]; li.appendChild(sw); li.appendChild(document.createTextNode(name));
      list.appendChild(li);
    });
  }

  function sessionTable(rows) {
    var body = document.querySelector("#sessions tbody");
    body.textContent = "";
    rows.forEach(function (s) {
      var tr = document.createElement("tr");
      var first = document.createElement("td");
      first.appendChild(document.createTextNode(clip(s.label || "(untitled)", 80)));
      var id = document.createElement("div"); id.className = "id"; id.textContent = s.id; first.appendChild(id);
      tr.appendChild(first);
      var cells = [
        [DATA.providers[s.p]], [s.project || ""], [(s.started || "").replace("T", " ")],
        [duration(s.started, s.updated), "num"], [integer.format(s.calls), "num"],
        [s.models.join(", ")], [integer.format(s.subagents), "num"],
        [integer.format(s.tokens), "num"], [usd(s.cost), "num"],
        [(100 * s.share).toFixed(1) + "%", "num"],
      ];
      cells.forEach(function (c) {
        var td = document.createElement("td"); td.textContent = c[0]; if (c[1]) td.className = c[1]; tr.appendChild(td);
      });
      body.appendChild(tr);
    });
  }

  function duration(start, end) {
    if (!start || !end) return "";
    var s = Math.max(0, Math.round((Date.parse(end) - Date.parse(start)) / 1000));
    var h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60);
    return h ? h + " h " + m + " min" : m ? m + " min" : s + " s";
  }

  function render() {
    var days = daily(), kind = state.stack;
    var names = DATA.stacks[kind];
    var colors = names.map(function (_, k) { return color(kind, k); });
    charts.tokens.src.data = stackRows(days, function (d) { return d.tokens[kind]; }, names, colors);
    charts.cost.src.data = stackRows(days, function (d) { return d.costs[kind]; }, names, colors);
    charts.cache.src.data = stackRows(days, function (d) { return CACHE_KINDS.map(function (c) { return d[c[0]]; }); },
      CACHE_KINDS.map(function (c) { return c[1]; }), CACHE_KINDS.map(function (c) { return c[2]; }));
    var saved = { x: [], saved: [], total: [], cost: [] }, running = 0;
    days.forEach(function (r) {
      running += r.uncached - r.cost;
      saved.x.push(r.day * DAY_MS); saved.saved.push(r.uncached - r.cost); saved.total.push(running); saved.cost.push(r.cost);
    });
    charts.saved.src.data = saved;
    var totals = kpis(days);
    bars(charts.projects, topProjects(totals.cost), function (r) { return r.label; }, function (r) { return r.sessions; });
    var sessions = topSessions(totals.cost);
    bars(charts.sessions, sessions, function (s) { return s.short; }, function (s) { return s.subagents; });
    sessionTable(sessions);
    hours();
    legend(days, colors);
    document.body.dataset.provider = state.provider < 0 ? "" : DATA.providers[state.provider];
    document.body.dataset.stacked = state.stack;
    document.body.dataset.rendered = String(Number(document.body.dataset.rendered || 0) + 1);
  }

  function start() {
    var select = document.getElementById("provider");
    select.addEventListener("change", function () { state.provider = Number(select.value); render(); });
    document.querySelectorAll("[data-stack]").forEach(function (button) {
      button.addEventListener("click", function () {
        state.stack = button.dataset.stack;
        document.querySelectorAll("[data-stack]").forEach(function (b) { b.setAttribute("aria-pressed", String(b === button)); });
        render();
      });
    });
    var drawn = build();
    render();
    return drawn.then(function () { document.body.dataset.charts = String(document.querySelectorAll(".chart .bk-Figure, .chart .bk-Canvas").length); });
  }

  start().catch(function (error) {
    document.body.dataset.error = String(error);
    throw error;
  });
})();
