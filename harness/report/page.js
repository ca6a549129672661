// report.html's own script: draws each plot the page's data holds with Chart.js (inlined before
// it), then writes into #drawn how many points each plot drew inside its axes, so a test (or a
// reader) can tell a plot that drew its data from an empty canvas.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("kvbench-data").textContent);
  var colours = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
                 "#7f7f7f", "#bcbd22", "#17becf"];
  var drawn = {};
  data.plots.forEach(function (plot) {
    var canvas = document.getElementById("plot-" + plot.id);
    if (!canvas || typeof Chart === "undefined") {
      drawn[plot.id] = 0;
      return;
    }
    var datasets = plot.datasets.map(function (d, i) {
      var colour = colours[(d.colour === undefined ? i : d.colour) % colours.length];
      return {
        label: d.label,
        data: d.points,
        showLine: !!d.line,
        borderColor: colour,
        backgroundColor: colour,
        pointRadius: d.line ? 0 : 3,
        pointStyle: d.marker || "circle",
        borderDash: d.dashed ? [6, 4] : [],
        fill: false,
        order: d.line ? 0 : 1
      };
    });
    var chart = new Chart(canvas, {
      type: "scatter",
      data: { datasets: datasets },
      options: {
        animation: false,
        responsive: false,
        plugins: { legend: { position: "bottom" }, title: { display: true, text: plot.title } },
        scales: {
          x: { type: plot.x_log ? "logarithmic" : "linear", title: { display: true, text: plot.x_label } },
          y: { beginAtZero: !!plot.y_zero, title: { display: true, text: plot.y_label } }
        }
      }
    });
    var area = chart.chartArea;
    var count = 0;
    chart.data.datasets.forEach(function (d, i) {
      if (plot.datasets[i].line) {
        return;
      }
      chart.getDatasetMeta(i).data.forEach(function (p) {
        if (isFinite(p.x) && isFinite(p.y) && p.x >= area.left - 1 && p.x <= area.right + 1 &&
            p.y >= area.top - 1 && p.y <= area.bottom + 1) {
          count += 1;
        }
      });
    });
    drawn[plot.id] = count;
  });
  document.getElementById("drawn").textContent = JSON.stringify(drawn);
})();
