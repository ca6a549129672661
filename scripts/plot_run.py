#!/usr/bin/python3
"""Plots of one kvbench run, as PNG and SVG, and an HTML page with the PNGs embedded.

Usage: scripts/plot_run.py RUN_DIR [--out DIR] [--kvbench PATH | --summary FILE]

Reads the run's summary (the JSON `kvbench report RUN_DIR --format json` prints; the script runs
that itself unless --summary names one) and RUN_DIR/calls.jsonl. Writes into DIR (default
RUN_DIR/plots) every plot whose data the run has:
  ttft.{png,svg}          TTFT against prompt tokens: each call, and the median per condition;
  decode.{png,svg}        decode rate against prompt tokens with the drift-corrected fit line
                          (intercept + prompt slope at t = 0) and its 95% band;
  memory.{png,svg}        KV memory against num_ctx with the arithmetic line per cache type,
                          when the run varied num_ctx;
  prefix_reuse.{png,svg}  second-read ratio against edit position with the 1 - f line and the
                          lesson's points;
  index.html              one page: the run's name, server and model, every PNG with a caption.
Needs Debian's python3-matplotlib. Exit status 2 on bad input, 1 when kvbench report fails.
"""

import argparse
import base64
import html
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MIB = 1024.0 * 1024.0


class InputError(Exception):
    """Bad input named for the user (exit 2)."""


def load_summary(run_dir, kvbench, summary_path):
    """The run's summary JSON: from --summary, or from `kvbench report RUN_DIR --format json`."""
    if summary_path:
        with open(summary_path, encoding="utf-8") as f:
            return json.load(f)
    if not os.access(kvbench, os.X_OK):
        raise InputError(f"{kvbench}: no kvbench binary there (give --kvbench PATH or --summary FILE)")
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "summary.json")
        proc = subprocess.run([kvbench, "report", run_dir, "--format", "json", "-o", out],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            sys.stderr.write(proc.stderr)
            raise RuntimeError(f"kvbench report {run_dir} --format json failed "
                               f"(exit {proc.returncode})")
        with open(out, encoding="utf-8") as f:
            return json.load(f)


def load_calls(run_dir):
    """The records of RUN_DIR/calls.jsonl, in file order; a call --resume sent again (same seq)
    takes its earlier record's place, as kvbench reads it."""
    path = os.path.join(run_dir, "calls.jsonl")
    if not os.path.exists(path):
        raise InputError(f"{path}: missing (is {run_dir} a kvbench run folder?)")
    calls = []
    at_seq = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.strip():
                try:
                    call = json.loads(line)
                except json.JSONDecodeError as e:
                    raise InputError(f"{path}:{n}: not JSON ({e.msg})") from e
                seq = call.get("seq") if isinstance(call, dict) else None
                if seq in at_seq:
                    calls[at_seq[seq]] = call
                    continue
                if seq is not None:
                    at_seq[seq] = len(calls)
                calls.append(call)
    return calls


def ok_calls(calls, kinds=("timed",)):
    """Single prompts of the given kinds that completed (conversation turns and a trace's
    requests are plotted apart)."""
    return [c for c in calls if c.get("kind") in kinds and c.get("outcome", "ok") == "ok"
            and "conversation" not in c and "trace" not in c]


def nested(record, *keys):
    """record[k0][k1]... or None where any level is missing or null."""
    for k in keys:
        if not isinstance(record, dict) or record.get(k) is None:
            return None
        record = record[k]
    return record


def condition_label(call, multi_ctx, multi_type):
    parts = []
    if multi_ctx:
        parts.append(f"num_ctx {call.get('num_ctx')}")
    if multi_type:
        parts.append(str(call.get("cache_type")))
    role = nested(call, "pair", "role")
    if role:
        parts.append(f"{role} read")
    return ", ".join(parts) or "calls"


def group_by_condition(calls):
    """{label: [calls]} by num_ctx and cache type, labelled only by what varied, and by the
    read's role (cold or edited) in prefix-reuse pairs."""
    multi_ctx = len({c.get("num_ctx") for c in calls}) > 1
    multi_type = len({c.get("cache_type") for c in calls}) > 1
    groups = {}
    for c in calls:
        groups.setdefault(condition_label(c, multi_ctx, multi_type), []).append(c)
    return groups


def save(fig, out_dir, name):
    """Writes NAME.png and NAME.svg; returns the PNG's path."""
    fig.tight_layout()
    png = os.path.join(out_dir, name + ".png")
    fig.savefig(png, dpi=110)
    fig.savefig(os.path.join(out_dir, name + ".svg"))
    plt.close(fig)
    return png


def finish_axes(ax, xlabel, ylabel, title):
    """Labels, title, a light grid and a small legend: every plot's frame."""
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)


def scatter_with_medians(ax, calls, value):
    """Each call as a faint point and the median per prompt length as a line, per condition."""
    for i, (label, group) in enumerate(sorted(group_by_condition(calls).items())):
        colour = f"C{i}"
        pts = [(c["prompt_tokens"], value(c)) for c in group if value(c) is not None]
        if not pts:
            continue
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=14, alpha=0.45, color=colour,
                   label=f"{label}: each call")
        by_len = {}
        for x, y in pts:
            by_len.setdefault(x, []).append(y)
        xs = sorted(by_len)
        ax.plot(xs, [statistics.median(by_len[x]) for x in xs], "o-", color=colour, ms=5,
                label=f"{label}: median")


def plot_ttft(calls, out_dir):
    timed = [c for c in ok_calls(calls) if nested(c, "client", "ttft_ms") is not None]
    if not timed:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    scatter_with_medians(ax, timed, lambda c: nested(c, "client", "ttft_ms"))
    ax.set_ylim(bottom=0)
    finish_axes(ax, "prompt tokens", "time to first token (ms)", "TTFT against prompt length")
    return save(fig, out_dir, "ttft"), (
        "Time to first token against prompt tokens: every timed call (faint) and the median per "
        "prompt length. Absolute times belong to this machine and server.")


def find_model(summary, metric):
    for m in nested(summary, "analysis", "models") or []:
        if m.get("metric") == metric:
            return m
    return None


def fit_line_band(linear, xs_ktokens):
    """Line and 95% band of intercept + prompt_ktokens slope at t_min = 0, at the reference
    levels of any categorical factor. Returns (line, lower, upper, source) or None.

    The band is the confidence interval of the mean: x0' V x0 with x0 = (1, k, 0, ...) and V the
    coefficient covariance the report writes (analysis.models[].fit.linear.covariance), times
    t_critical. Older summaries without the covariance get it from the coefficient CIs instead:
    se = (upper - lower) / (2 t) for intercept and slope, taken as uncorrelated, which ignores
    their (usually negative) covariance and so draws a wider band away from the data's centre."""
    coefs = linear.get("coefficients") or []
    names = [c.get("name") for c in coefs]
    if "intercept" not in names or "prompt_ktokens" not in names:
        return None
    i0, i1 = names.index("intercept"), names.index("prompt_ktokens")
    b0, b1 = coefs[i0]["estimate"], coefs[i1]["estimate"]
    t = linear.get("t_critical") or 1.96
    line = [b0 + b1 * k for k in xs_ktokens]
    cov = linear.get("covariance")
    if cov and len(cov) == len(coefs):
        var = [cov[i0][i0] + 2 * k * cov[i0][i1] + k * k * cov[i1][i1] for k in xs_ktokens]
        source = "coefficient covariance"
    else:
        def se(c):
            lower, upper = ci_bounds(c.get("ci"), c["estimate"])
            return (upper - lower) / (2 * t)
        s0, s1 = se(coefs[i0]), se(coefs[i1])
        var = [s0 * s0 + k * k * s1 * s1 for k in xs_ktokens]
        source = "coefficient CIs (covariance not in the summary)"
    half = [t * math.sqrt(max(v, 0.0)) for v in var]
    return line, [l - h for l, h in zip(line, half)], [l + h for l, h in zip(line, half)], source


def plot_decode(summary, calls, out_dir):
    timed = [c for c in ok_calls(calls) if nested(c, "client", "decode_tps") is not None]
    if not timed:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    scatter_with_medians(ax, timed, lambda c: nested(c, "client", "decode_tps"))
    probes = [c for c in ok_calls(calls, ("probe",)) if nested(c, "client", "decode_tps")]
    if probes:
        ax.scatter([c["prompt_tokens"] for c in probes], [c["client"]["decode_tps"] for c in probes],
                   marker="x", s=18, color="grey", label="drift probes")
    caption = "Decode rate against prompt tokens: every timed call and the median per length."
    model = find_model(summary, "decode_tps")
    linear = nested(model, "fit", "linear") if model else None
    xs = [c["prompt_tokens"] for c in timed]
    # The line is drawn only where prompt length is the model's one numeric factor: with num_ctx
    # in the model too, "slope at t = 0" would sit at num_ctx = 0, far outside the data.
    if linear and model.get("numeric") == ["prompt_ktokens"] and min(xs) < max(xs):
        grid = [min(xs) + (max(xs) - min(xs)) * i / 50 for i in range(51)]
        fitted = fit_line_band(linear, [x / 1000.0 for x in grid])
        if fitted:
            line, lower, upper, source = fitted
            level = int(round(100 * (linear.get("level") or 0.95)))
            refs = ", ".join(f"{d.get('factor')} {d.get('reference')}"
                             for d in nested(model, "fit", "dummies") or [])
            label = "fit, drift removed (t = 0)" + (f", at {refs}" if refs else "")
            ax.plot(grid, line, "k-", lw=1.5, label=label)
            ax.fill_between(grid, lower, upper, color="k", alpha=0.12, label=f"{level}% band")
            caption += (f" The line is the linear fit's intercept plus its prompt slope at t = 0 "
                        f"(drift removed), with its {level}% confidence band from the {source}.")
    finish_axes(ax, "prompt tokens", "decode rate (tokens/s)",
                "Decode rate against prompt length")
    return save(fig, out_dir, "decode"), caption


def plot_memory(summary, out_dir):
    blocks = nested(summary, "memory", "blocks") or []
    if len({b.get("num_ctx") for b in blocks}) < 2:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    types = sorted({b.get("cache_type") for b in blocks})
    drawn = False
    for i, kind in enumerate(types):
        rows = sorted((b for b in blocks if b.get("cache_type") == kind), key=lambda b: b["num_ctx"])
        colour = f"C{i}"
        arith = [(b["num_ctx"], b["kv_arithmetic_bytes"] / MIB) for b in rows
                 if b.get("kv_arithmetic_bytes") is not None]
        if arith:
            ax.plot([a[0] for a in arith], [a[1] for a in arith], "-", color=colour,
                    label=f"{kind}: arithmetic")
            drawn = True
        for key, marker, what in (("kv_logged_bytes", "o", "KV buffer (server log)"),
                                  ("rss_after_load_bytes", "s", "RSS after load")):
            pts = [(b["num_ctx"], b[key] / MIB) for b in rows if b.get(key) is not None]
            if pts:
                ax.scatter([p[0] for p in pts], [p[1] for p in pts], marker=marker, color=colour,
                           facecolors="none" if marker == "s" else colour, label=f"{kind}: {what}")
                drawn = True
    if not drawn:
        plt.close(fig)
        return None
    ax.set_xscale("log", base=2)
    finish_axes(ax, "num_ctx (tokens)", "MiB", "Memory against the context window")
    return save(fig, out_dir, "memory"), (
        "KV-cache memory against num_ctx per cache type: the KV buffer the server logged (filled "
        "circles) and process RSS after load (open squares), beside the line the cache type's "
        "arithmetic gives (layers x KV heads x head size x bytes per number x cells).")


def position_x(row):
    """Where a prefix-reuse row sits on the edit-position axis: its fraction, or 1 - (1 - f)."""
    pos = row.get("edit_position")
    try:
        return float(pos)
    except (TypeError, ValueError):
        omf = row.get("one_minus_f")
        return 1.0 - omf if omf is not None else 1.0


def pair_x(pair):
    """A pair's measured edit position: its first difference over its tokens where known."""
    if pair.get("first_diff") is not None and pair.get("tokens"):
        return pair["first_diff"] / pair["tokens"]
    return position_x(pair)


def ci_bounds(ci, value):
    """(lower, upper) of a summary CI ({level, lower, upper} or [lower, upper]); (value, value)
    when the run had too few pairs for one."""
    if isinstance(ci, dict) and ci.get("lower") is not None and ci.get("upper") is not None:
        return ci["lower"], ci["upper"]
    if isinstance(ci, list) and len(ci) == 2 and None not in ci:
        return ci[0], ci[1]
    return value, value


def plot_prefix(summary, out_dir):
    positions = nested(summary, "prefix_reuse", "positions") or []
    rows = [r for r in positions if r.get("prompt_ms_ratio") is not None]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ax.plot([0, 1], [1, 0], "k--", lw=1, label="1 - f (reuse up to the first difference)")
    pairs = [p for p in nested(summary, "prefix_reuse", "pairs") or []
             if p.get("prompt_ms_ratio") is not None]
    if pairs:
        ax.scatter([pair_x(p) for p in pairs], [p["prompt_ms_ratio"] for p in pairs], s=12,
                   alpha=0.4, color="C0", label="each pair")
    xs = [position_x(r) for r in rows]
    ys = [r["prompt_ms_ratio"] for r in rows]
    cis = [ci_bounds(r.get("prompt_ms_ci"), y) for y, r in zip(ys, rows)]
    lo = [max(y - c[0], 0.0) for y, c in zip(ys, cis)]
    hi = [max(c[1] - y, 0.0) for y, c in zip(ys, cis)]
    ax.errorbar(xs, ys, yerr=[lo, hi], fmt="o", color="C0", capsize=3,
                label="median ratio, 95% CI (this run)")
    for x, y, r in zip(xs, ys, rows):
        below = r.get("edit_position") == "none"
        ax.annotate(str(r.get("edit_position")), (x, y), textcoords="offset points",
                    xytext=(5, -12 if below else 5), fontsize=8)
    lesson = [(position_x(r), r["lesson_ratio"]) for r in positions
              if r.get("lesson_ratio") is not None]
    if lesson:
        ax.scatter([p[0] for p in lesson], [p[1] for p in lesson], marker="D", color="C3",
                   label="the lesson's figures")
    ax.set_xlim(-0.02, 1.05)
    ax.set_ylim(bottom=0)
    finish_axes(ax, "edit position f (fraction of the prompt before the first difference)",
                "second read / cold read (prompt time)",
                "Prefix reuse: the second read against the edit position")
    return save(fig, out_dir, "prefix_reuse"), (
        "The resend's prompt-processing time over its cold read, against where the edit sits "
        "(question-only and unchanged resends at their first difference). The dashed 1 - f line "
        "is what reusing everything before the first difference predicts; diamonds are the "
        "lesson's figures.")


def plot_conversation_ttft(summary, out_dir):
    """TTFT against the turn, with the history reused and with reuse defeated."""
    rows = [r for r in nested(summary, "conversation", "rows") or []
            if r.get("ttft_ms") is not None]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    series = {}
    for r in rows:
        key = (r["config"], r["conversations"], r["reuse"])
        series.setdefault(key, []).append((r["turn"], r["ttft_ms"]))
    multi_config = len({k[0] for k in series}) > 1
    for i, (key, pts) in enumerate(sorted(series.items())):
        config, level, reuse = key
        pts.sort()
        label = f"{level} conversation{'s' if level != 1 else ''}, reuse {reuse}"
        if multi_config:
            label = f"{config}: {label}"
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-" if reuse == "on" else "s--",
                color=f"C{i}", ms=5, label=label)
    ax.set_ylim(bottom=0)
    finish_axes(ax, "turn", "median time to first token (ms)",
                "Conversations: TTFT per turn, history reused or not")
    return save(fig, out_dir, "conversation_ttft"), (
        "Median time to first token at each turn of a conversation, with the server free to reuse "
        "the history (solid) and with reuse defeated (dashed): every turn resends the whole "
        "conversation, so without reuse the cost grows with the turn.")


def plot_trace(summary, out_dir):
    """A trace replay: TTFT against the tokens each request computed, and reported reuse against
    the policy's prediction."""
    rows = [r for r in nested(summary, "trace", "requests") or []
            if r.get("ttft_ms") is not None and r.get("reused_tokens") is not None]
    if not rows:
        return None
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    share = [r["reused_tokens"] / r["input_tokens"] for r in rows]
    points = left.scatter([r["input_tokens"] - r["reused_tokens"] for r in rows],
                          [r["ttft_ms"] for r in rows], c=share, cmap="viridis", vmin=0, vmax=1,
                          s=22, label="a request")
    fig.colorbar(points, ax=left, label="share of the prompt reused (server's cache_n)")
    left.set_ylim(bottom=0)
    finish_axes(left, "tokens computed (input - reused)", "time to first token (ms)",
                "Trace replay: TTFT per request")
    predicted = [r for r in rows if r.get("predicted_tokens") is not None]
    if predicted:
        most = max(max(r["predicted_tokens"], r["reused_tokens"]) for r in predicted)
        right.plot([0, most], [0, most], "--", color="0.6", label="reported = predicted")
        right.scatter([r["predicted_tokens"] for r in predicted],
                      [r["reused_tokens"] for r in predicted], s=22, color="C1")
        right.legend(loc="upper left")
    finish_axes(right, "reuse the server's policy predicts (tokens)",
                "reuse the server reported (tokens)", "Each request's reuse, proved")
    return save(fig, out_dir, "trace"), (
        "Left: each replayed request's time to first token against the prompt tokens it "
        "computed, coloured by the share it reused. Right: the reuse the server reported against "
        "what its caching policy predicts; a point off the dashed line is a request whose reuse "
        "the report names as a gap.")


def plot_conversation_reuse(summary, out_dir):
    """The share of the predicted history reused, against the conversations sharing the slots."""
    levels = nested(summary, "conversation", "levels") or []
    if not levels:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.5))
    by_config = {}
    for l in levels:
        by_config.setdefault(l["config"], []).append((l["conversations"], 100 * l["reuse_rate"]))
    for i, (config, pts) in enumerate(sorted(by_config.items())):
        pts.sort()
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-", color=f"C{i}", label=config)
    ax.set_xticks(sorted({l["conversations"] for l in levels}))
    slots = nested(summary, "conversation", "slots")
    if slots:
        ax.axvline(slots, color="k", ls=":", lw=1, label=f"server slots ({slots})")
    ax.set_ylim(0, 105)
    finish_axes(ax, "conversations taking turns",
                "history reused (% of predicted)",
                "Conversations: how many stay cached")
    return save(fig, out_dir, "conversation_reuse"), (
        "Turns after the first, history reuse on: the tokens the server reused as a share of the "
        "history each turn could have reused, against how many conversations took turns over the "
        "server's slots.")


def run_identity(summary, run_dir):
    """(name, server, model) for the page's heading, from the summary's run section."""
    run = summary.get("run") or {}
    scenario = run.get("scenario") if isinstance(run.get("scenario"), dict) else {}
    name = run.get("name") or scenario.get("name") or os.path.basename(os.path.normpath(run_dir))
    server = run.get("server") or scenario.get("server") or {}
    if isinstance(server, dict):
        kind = server.get("kind") or ""
        version = (server.get("version") or "").strip().splitlines()
        version = version[0] if version else ""
        server_text = " ".join(str(s) for s in (kind, version) if s) or "unknown"
    else:
        server_text = str(server)
    model = run.get("model")
    if isinstance(model, dict):
        model_text = model.get("name") or model.get("source") or model.get("path") or "unknown"
    else:
        model_text = str(model or (server.get("model") if isinstance(server, dict) else "") or
                         "unknown")
    return str(name), server_text, str(model_text)


def write_html(out_dir, identity, plots):
    name, server, model = identity
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             f"<title>kvbench: {html.escape(name)}</title>",
             "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}"
             "figure{margin:2em 0}img{max-width:100%;border:1px solid #ddd}"
             "figcaption{font-size:0.9em;color:#444;margin-top:0.4em}</style></head><body>",
             f"<h1>kvbench run: {html.escape(name)}</h1>",
             f"<p>Server: {html.escape(server)}<br>Model: {html.escape(model)}</p>"]
    if not plots:
        parts.append("<p>This run has no data any plot needs.</p>")
    for png, caption in plots:
        with open(png, "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        base = os.path.basename(png)
        parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{html.escape(base)}" '
                     f'data-file="{html.escape(base)}">'
                     f"<figcaption>{html.escape(caption)}</figcaption></figure>")
    parts.append("</body></html>")
    path = os.path.join(out_dir, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(parts) + "\n")
    return path


def default_kvbench():
    """The source tree's build/kvbench beside this script, else kvbench on PATH (installed)."""
    here = os.path.dirname(os.path.abspath(__file__))
    built = os.path.join(here, "..", "build", "kvbench")
    if os.access(built, os.X_OK):
        return built
    return shutil.which("kvbench") or built


def main(argv):
    ap = argparse.ArgumentParser(description="Plot one kvbench run as PNG, SVG and one HTML page.")
    ap.add_argument("run_dir", help="the run folder (holds run.json and calls.jsonl)")
    ap.add_argument("--out", help="where to write the plots (default RUN_DIR/plots)")
    ap.add_argument("--kvbench", default=default_kvbench(),
                    help="the kvbench binary that writes the summary (default: the source tree's "
                    "build/kvbench, else kvbench on PATH)")
    ap.add_argument("--summary",
                    help="use this `kvbench report --format json` file instead of running it")
    args = ap.parse_args(argv)
    try:
        if not os.path.isdir(args.run_dir):
            raise InputError(f"{args.run_dir}: not a folder")
        calls = load_calls(args.run_dir)
        summary = load_summary(args.run_dir, args.kvbench, args.summary)
    except (InputError, OSError, json.JSONDecodeError) as e:
        print(f"plot_run: {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"plot_run: {e}", file=sys.stderr)
        return 1
    out_dir = args.out or os.path.join(args.run_dir, "plots")
    os.makedirs(out_dir, exist_ok=True)
    plots = [p for p in (plot_ttft(calls, out_dir), plot_decode(summary, calls, out_dir),
                         plot_memory(summary, out_dir), plot_prefix(summary, out_dir),
                         plot_conversation_ttft(summary, out_dir),
                         plot_conversation_reuse(summary, out_dir),
                         plot_trace(summary, out_dir)) if p]
    page = write_html(out_dir, run_identity(summary, args.run_dir), plots)
    for png, _ in plots:
        print(png)
    print(page)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
