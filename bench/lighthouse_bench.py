"""Lighthouse on the pages a phone opens in a class: the run page and a lesson question, served as `make classroom`
serves them (DEBUG off, hashed and compressed static files), under Lighthouse's mobile profile (a Moto G class
phone: slow 4G, 150 ms RTT, 1.6 Mbit/s, CPU slowed 4x).

Starts `manage.py runstack` with HEARTBEAT_CLASSROOM=1 and ROOM=127.0.0.1 (everything stays on this machine),
a run of a built-in scenario and a lesson run (its first step asks a question as the page opens), then
Lighthouse (npm `lighthouse`, run with npx at a pinned version, on Debian's Chromium) on each viewer link.

Prints per page: the performance score and its metrics, accessibility, best practices and SEO, whether the
font-size and meta-description audits pass, what text compression would still save, the bytes and requests.

    python bench/lighthouse_bench.py [--runs 3] [--preset desktop] [--keep DIR] [--speed 1] [--after 0]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from simulation_bench import reference_ms  # noqa: E402

from heartbeat_site import processes  # noqa: E402
from heartbeat_site.embedded_redis import free_port, start_embedded  # noqa: E402

LIGHTHOUSE = "lighthouse@12.8.2"  # 13.x needs Node 22; the project runs on Node 20
CHROME_FLAGS = "--headless=new --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
PAGES = {"run page": {"scenario": "kubelet-crash"}, "lesson question": {"lesson": "kubelet-crash-walkthrough"}}
GOALS = "performance >= 90, LCP < 2.5 s, font-size audit passing, accessibility 100"


def start_classroom(workdir: Path, redis_url: str) -> tuple[subprocess.Popen, str]:
    """The classroom command on a database and a Redis of its own (no run of anything else to take over)."""
    port = free_port()
    log = workdir / "classroom.log"
    env = {**os.environ, "HEARTBEAT_CLASSROOM": "1", "ROOM": "127.0.0.1", "PYTHONUNBUFFERED": "1",
           "REDIS_URL": redis_url, "DATABASE_URL": f"sqlite:///{workdir / 'bench.sqlite3'}",
           "HEARTBEAT_STATIC_ROOT": str(workdir / "staticfiles")}
    for command in (["migrate", "--no-input", "-v", "0"], ["load_builtins"]):
        subprocess.run([sys.executable, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    process = subprocess.Popen([sys.executable, "manage.py", "runstack", "--port", str(port)], cwd=ROOT, env=env,
                               stdout=open(log, "ab"), stderr=subprocess.STDOUT, start_new_session=True)  # noqa: SIM115
    deadline = time.monotonic() + 120
    while "The room joins at" not in log.read_text(errors="replace"):
        if process.poll() is not None or time.monotonic() > deadline:
            processes.stop(process)
            raise RuntimeError(f"the classroom did not start:\n{log.read_text(errors='replace')[-3000:]}")
        time.sleep(0.2)
    return process, f"http://127.0.0.1:{port}"


def start_run(base: str, source: dict, speed: float = 1, after: float = 0) -> str:
    """A run's viewer link; a lesson's once its first step has started (its page then shows the step)."""
    request = urllib.request.Request(f"{base}/api/runs", data=json.dumps({**source, "speed": speed}).encode(),
                                     headers={"Content-Type": "application/json"}, method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        url = json.loads(response.read())["viewer_url"]
    deadline = time.monotonic() + 60
    while "lesson" in source and 'class="lb-progress"></span>' in urllib.request.urlopen(url).read().decode():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the lesson at {url} started no step within 60 s")
        time.sleep(0.5)
    time.sleep(after)
    return url


def lighthouse(url: str, out: Path, preset: str | None) -> dict:
    command = ["npx", "--yes", LIGHTHOUSE, url, "--output=json", f"--output-path={out}", "--quiet",
               f"--chrome-flags={CHROME_FLAGS}", "--only-categories=performance,accessibility,best-practices,seo"]
    if preset:
        command.append(f"--preset={preset}")
    chromium = os.environ.get("CHROMIUM", "/usr/bin/chromium")
    subprocess.run(command, check=True, env={**os.environ, "CHROME_PATH": chromium}, cwd=out.parent)
    return json.loads(out.read_text())


def figures(report: dict) -> dict:
    audits, categories = report["audits"], report["categories"]
    requests = audits["network-requests"]["details"]["items"]
    compression = audits["uses-text-compression"].get("details", {}).get("overallSavingsBytes", 0)
    legible = audits["font-size"]
    return {
        "performance": round(categories["performance"]["score"] * 100),
        "fcp_s": audits["first-contentful-paint"]["numericValue"] / 1000,
        "lcp_s": audits["largest-contentful-paint"]["numericValue"] / 1000,
        "tbt_ms": audits["total-blocking-time"]["numericValue"],
        "cls": audits["cumulative-layout-shift"]["numericValue"],
        "si_s": audits["speed-index"]["numericValue"] / 1000,
        "accessibility": round(categories["accessibility"]["score"] * 100),
        "best_practices": round(categories["best-practices"]["score"] * 100),
        "seo": round(categories["seo"]["score"] * 100),
        "font_size": ("n/a (desktop)" if legible["score"] is None
                      else f"{'pass' if legible['score'] == 1 else 'fail'} ({legible.get('displayValue', '')})"),
        "meta_description": "pass" if audits["meta-description"]["score"] == 1 else "fail",
        "compression_kib": compression / 1024,
        "kib": audits["total-byte-weight"]["numericValue"] / 1024,
        "requests": len(requests),
        "failing": sorted(key for key, audit in audits.items()
                          if audit.get("score") is not None and audit["score"] < 0.9
                          and audit.get("scoreDisplayMode") in ("binary", "numeric", "metricSavings")),
    }


def median_run(reports: list[dict]) -> dict:
    """The run of median performance score (Lighthouse's own advice for noisy machines)."""
    return sorted(reports, key=lambda r: r["performance"])[len(reports) // 2]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=3, help="Lighthouse runs per page; the median one is shown")
    parser.add_argument("--preset", choices=["desktop"], default=None, help="desktop instead of the mobile profile")
    parser.add_argument("--keep", type=Path, default=None, help="keep the JSON reports in this directory")
    parser.add_argument("--speed", type=float, default=1, help="the run page's run at this speed (a busier diagram)")
    parser.add_argument("--after", type=float, default=0,
                        help="seconds between the run page's run starting and the first Lighthouse run")
    args = parser.parse_args()
    workdir = Path(tempfile.mkdtemp(prefix="heartbeat-lighthouse-"))
    reports_dir = args.keep or workdir
    reports_dir.mkdir(parents=True, exist_ok=True)
    redis = start_embedded()
    process, base = start_classroom(workdir, redis.url)
    try:
        results = {}
        for name, source in PAGES.items():
            url = start_run(base, source, **({} if "lesson" in source else {"speed": args.speed, "after": args.after}))
            stem = re.sub(r"\W+", "-", name)
            runs = []
            for i in range(args.runs):
                load = os.getloadavg()[0]
                runs.append({**figures(lighthouse(url, reports_dir / f"{stem}-{i}.json", args.preset)), "load": load})
            results[name] = {**median_run(runs), "performance_all": [r["performance"] for r in runs],
                             "lcp_all": [round(r["lcp_s"], 2) for r in runs],
                             "tbt_all": [round(r["tbt_ms"]) for r in runs],
                             "font_size_all": [r["font_size"] for r in runs],
                             "accessibility_all": [r["accessibility"] for r in runs],
                             "load_all": [round(r["load"], 1) for r in runs]}
    finally:
        processes.stop(process, timeout=20)
        redis.stop()
        shutil.rmtree(workdir, ignore_errors=True)
    profile = args.preset or "mobile"
    print(f"Lighthouse {LIGHTHOUSE.split('@')[1]}, {profile} profile, median of {args.runs} runs (goals: {GOALS})")
    print("| page | perf | FCP s | LCP s | TBT ms | CLS | SI s | a11y | best pr. | SEO | font size | meta descr. "
          "| compression to save KiB | KiB | requests |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in results.items():
        print(f"| {name} | {r['performance']} | {r['fcp_s']:.1f} | {r['lcp_s']:.1f} | {r['tbt_ms']:.0f} | "
              f"{r['cls']:.3f} | {r['si_s']:.1f} | {r['accessibility']} | {r['best_practices']} | {r['seo']} | "
              f"{r['font_size']} | {r['meta_description']} | {r['compression_kib']:.0f} | {r['kib']:.0f} | "
              f"{r['requests']} |")
    for name, r in results.items():
        passed = sum(f.startswith("pass") for f in r["font_size_all"])
        print(f"{name}: performance of each run {r['performance_all']}, LCP {r['lcp_all']} s, TBT {r['tbt_all']} ms, "
              f"accessibility {r['accessibility_all']}, font size passed in {passed} of {len(r['font_size_all'])} "
              f"({'; '.join(r['font_size_all'])}), load average at each run's start {r['load_all']}; "
              f"audits under 0.9: {', '.join(r['failing']) or 'none'}")
    print(f"median of {statistics.median([r['performance'] for r in results.values()])} over the pages")
    print(f"Reference workload: {reference_ms():.0f} ms; load average {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
