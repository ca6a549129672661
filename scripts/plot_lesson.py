#!/usr/bin/python3
"""Plots of a `kvbench reproduce lesson` folder and one HTML page covering every lab.

Usage: scripts/plot_lesson.py LESSON_DIR [--kvbench PATH]

Reads LESSON_DIR/lesson-report.json (written by `kvbench reproduce lesson`) and each lab's run
folder inside LESSON_DIR; writes with scripts/plot_run.py's plots, into LESSON_DIR/plots/<lab>/,
a PNG and an SVG of each plot a lab has data for (TTFT and decode rate against prompt tokens,
memory against num_ctx, the second read against the edit position), and LESSON_DIR/index.html:
per lab the lesson's figures beside the values measured here, the shape checks with their
verdicts, and the lab's plots embedded, each linking its SVG. Needs Debian's python3-matplotlib.
Exit status 2 on bad input, 1 when `kvbench report` fails for a lab.
"""

import argparse
import base64
import html
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import plot_run  # noqa: E402

COLOURS = {"pass": "#1a7f37", "fail": "#cf222e", "inconclusive": "#9a6700"}


def lab_plots(lesson_dir, lab, kvbench):
    """[(png path, caption)] for one lab; [] when the lab did not run."""
    if not lab.get("run_dir"):
        return []
    run_dir = os.path.join(lesson_dir, os.path.basename(os.path.normpath(lab["run_dir"])))
    calls = plot_run.load_calls(run_dir)
    summary = plot_run.load_summary(run_dir, kvbench, None)
    out = os.path.join(lesson_dir, "plots", lab["id"])
    os.makedirs(out, exist_ok=True)
    made = (plot_run.plot_ttft(calls, out), plot_run.plot_decode(summary, calls, out),
            plot_run.plot_memory(summary, out), plot_run.plot_prefix(summary, out))
    return [p for p in made if p]


def lab_section(lesson_dir, lab, plots):
    e = html.escape
    parts = [f'<section id="{e(lab["id"])}"><h2>{e(lab.get("title", lab["id"]))}</h2>']
    if lab.get("figures"):
        parts.append("<table><tr><th>figure</th><th>the lesson</th><th>here</th></tr>")
        for f in lab["figures"]:
            parts.append(f"<tr><td>{e(f['label'])}</td><td>{e(f['lesson'])}</td>"
                         f"<td>{e(f['here'])}</td></tr>")
        parts.append("</table>")
    parts.append("<ul>")
    for c in lab.get("checks", []):
        colour = COLOURS.get(c["verdict"], "#222")
        tol = f" Tolerance: {e(c['tolerance'])}." if c.get("tolerance") else ""
        parts.append(f'<li><b style="color:{colour}" class="verdict">{e(c["verdict"])}</b>: '
                     f"{e(c['claim'])}. {e(c['why'])}.{tol}</li>")
    for n in lab.get("notes", []):
        parts.append(f"<li>note: {e(n)}</li>")
    parts.append("</ul>")
    for png, caption in plots:
        rel = os.path.relpath(png, lesson_dir)
        with open(png, "rb") as f:
            data = base64.b64encode(f.read()).decode("ascii")
        svg = rel[:-4] + ".svg"
        parts.append(f'<figure><img src="data:image/png;base64,{data}" alt="{e(rel)}" '
                     f'data-file="{e(rel)}"><figcaption>{e(caption)} '
                     f'<a href="{e(svg)}">SVG</a></figcaption></figure>')
    parts.append("</section>")
    return "\n".join(parts)


def write_page(lesson_dir, report, sections):
    e = html.escape
    v = report.get("verdicts", {})
    head = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
            "<title>kvbench: the lesson, reproduced</title>",
            "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto;color:#222}"
            "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:0.2em 0.5em;"
            "text-align:left}figure{margin:1.5em 0}img{max-width:100%;border:1px solid #ddd}"
            "figcaption{font-size:0.9em;color:#444}</style></head><body>",
            "<h1>kvbench: the lesson, reproduced</h1>",
            f"<p>Size: {e(str(report.get('size')))}; server: {e(str(report.get('server')))}; "
            f"model: {e(str(report.get('model')))}; started {e(str(report.get('started')))}, "
            f"took {report.get('seconds', 0):.0f} s.<br>Checks: {v.get('pass', 0)} pass, "
            f"{v.get('fail', 0)} fail, {v.get('inconclusive', 0)} inconclusive.</p>",
            f"<p>The lesson's figures come from {e(report.get('lesson', {}).get('machine', ''))}"
            ". Absolute times are shown, never judged; the checks test each claim's shape.</p>"]
    path = os.path.join(lesson_dir, "index.html")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(head + sections + ["</body></html>"]) + "\n")
    return path


def main(argv):
    ap = argparse.ArgumentParser(description="Plot a kvbench lesson reproduction as one page.")
    ap.add_argument("lesson_dir", help="the folder `kvbench reproduce lesson` wrote")
    ap.add_argument("--kvbench", default=plot_run.default_kvbench(),
                    help="the kvbench binary that writes each lab's summary")
    args = ap.parse_args(argv)
    report_path = os.path.join(args.lesson_dir, "lesson-report.json")
    try:
        with open(report_path, encoding="utf-8") as f:
            report = json.load(f)
        sections = []
        for lab in report.get("labs", []):
            plots = lab_plots(args.lesson_dir, lab, args.kvbench)
            sections.append(lab_section(args.lesson_dir, lab, plots))
            for png, _ in plots:
                print(png)
    except (plot_run.InputError, OSError, json.JSONDecodeError, KeyError) as e:
        print(f"plot_lesson: {report_path if isinstance(e, OSError) else ''} {e}", file=sys.stderr)
        return 2
    except RuntimeError as e:
        print(f"plot_lesson: {e}", file=sys.stderr)
        return 1
    print(write_page(args.lesson_dir, report, sections))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
