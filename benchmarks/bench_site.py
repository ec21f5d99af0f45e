"""Benchmark the HTML reference: build time of the site of rules/, and for the 10,000-lifepath corpus the
biggest page, its load time in Chromium and the search's latency; the character builder's response on
Burning Wheel (a click to the next legal lifepaths offered, the path finder for three steps).

Not a test: run it by hand (`.venv/bin/python benchmarks/bench_site.py`), read the medians. Needs Debian's
Chromium (/usr/bin/chromium) and playwright, as the browser tests do. The machine is shared and noisy:
every figure is a median of several runs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench import median_seconds, synthetic_ruleset  # noqa: E402

from rulesdsl.compile.pipeline import compile_paths  # noqa: E402
from rulesdsl.targets.build import render_all, write_output  # noqa: E402
from rulesdsl.targets.html import site as html  # noqa: E402

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--no-sandbox", "--disable-background-networking", "--disable-component-update", "--no-first-run"]
QUERIES = ["path 4242", "skill 17", "setting 12 trait 3", "pth 999", "sorcery", "p", "traiit 9"]


def site_build(path: Path, repeats: int, work: Path) -> dict[str, float]:
    """Medians (wall clock and CPU): HTML rendering alone, compiling, and the whole cold build (compile,
    Python packages and site rendered, every file written to a fresh folder), as `rulesdsl build` does."""
    os.environ["RULESDSL_CACHE_DIR"] = "off"
    compiled = compile_paths([path]).rulesets
    fresh = iter(range(10**6))

    def build() -> None:
        write_output(work / f"out{next(fresh)}", render_all(compile_paths([path]).rulesets))

    return {
        "render": median_seconds(lambda: html.render(compiled), repeats),
        "render_cpu": median_seconds(lambda: html.render(compiled), repeats, time.process_time),
        "compile": median_seconds(lambda: compile_paths([path]), repeats),
        "build": median_seconds(build, repeats),
        "build_cpu": median_seconds(build, repeats, time.process_time),  # CPU: what other jobs inflate less
    }


def browser_figures(site: Path, page: str, repeats: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright

    figures: dict[str, float] = {}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page()
        loads = []
        for _ in range(repeats):
            start = time.perf_counter()
            tab.goto((site / page).as_uri(), wait_until="load")
            loads.append(time.perf_counter() - start)
        figures["load"] = statistics.median(loads)
        figures["load_js"] = tab.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd") / 1000
        start = time.perf_counter()
        tab.evaluate("new Promise(done => window.rulesdslLoadIndex(done))")
        figures["index_load"] = time.perf_counter() - start
        times = tab.evaluate(
            """queries => queries.map(q => { const runs = [];
                 for (let i = 0; i < 5; i++) { const t = performance.now(); window.rulesdslQuery(q);
                   runs.push(performance.now() - t); }
                 runs.sort((a, b) => a - b); return runs[2]; })""",
            QUERIES,
        )
        figures["query_median"] = statistics.median(times) / 1000
        figures["query_worst"] = max(times) / 1000
        typed = []  # from a keystroke to the results shown: searching and drawing the list
        for query in QUERIES:
            start = time.perf_counter()
            tab.fill("#rd-search", query)
            tab.wait_for_function("q => new URL(location.href).searchParams.get('q') === q", arg=query)
            tab.wait_for_selector("#rd-results:not([hidden])")
            typed.append(time.perf_counter() - start)
        figures["typed_median"] = statistics.median(typed)
        browser.close()
    return figures


def builder_figures(site: Path, repeats: int) -> dict[str, float]:
    """In Chromium, on Burning Wheel's builder.html: from a click on a lifepath to the page updated (the
    lifepaths that may follow offered, the sheet burnt, the choices and the address), and the path finder
    from Born Peasant to Knight in at most three steps. Timed inside the page (performance.now), medians."""
    from playwright.sync_api import sync_playwright

    clicks, finds = [], []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        tab = browser.new_page()
        for _ in range(repeats):
            tab.goto((site / "burning_wheel" / "builder.html").as_uri() + "?path=born_peasant")
            for step in ("farmer", "peasant_conscript"):
                clicks.append(
                    tab.evaluate(
                        """id => { const t = performance.now();
                             document.querySelector(`#b-next button.b-offer[data-id="${id}"]`).click();
                             return performance.now() - t; }""",
                        step,
                    )
                )
            finds.append(
                tab.evaluate(
                    """() => { document.getElementById("b-from").value = "born_peasant";
                         document.getElementById("b-to").value = "Knight";
                         document.getElementById("b-steps").value = "3";
                         const t = performance.now();
                         document.querySelector("#b-finder button[type=submit]").click();
                         return performance.now() - t; }"""
                )
            )
            assert tab.locator("#b-found li").count() == 59
        browser.close()
    return {"click": statistics.median(clicks) / 1000, "find": statistics.median(finds) / 1000}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=5, help="runs per measurement (median reported)")
    parser.add_argument("--lifepaths", type=int, default=10000, help="size of the synthetic corpus")
    parser.add_argument("--builder", action="store_true", help="only the character builder's figures")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="rulesdsl-site-bench-"))
    try:
        write_output(work / "out-rules", render_all(compile_paths([ROOT / "rules"]).rulesets))
        built = builder_figures(work / "out-rules" / "site", args.repeats)
        print(
            f"builder (Burning Wheel, in Chromium): a click to the next legal lifepaths offered and the sheet "
            f"burnt {built['click'] * 1000:.1f} ms; the path finder, Born Peasant to Knight in at most 3 steps "
            f"(59 paths) {built['find'] * 1000:.1f} ms (medians)"
        )
        if args.builder:
            return
        took = site_build(ROOT / "rules", args.repeats, work)
        print(
            f"rules/: whole cold build (compile + Python + HTML, written) {took['build'] * 1000:.0f} ms "
            f"({took['build_cpu'] * 1000:.0f} ms CPU), of which compiling {took['compile'] * 1000:.0f} ms; "
            f"HTML rendering alone {took['render'] * 1000:.0f} ms ({took['render_cpu'] * 1000:.0f} ms CPU)"
        )
        corpus = synthetic_ruleset(work / "synth" / "synth", args.lifepaths)
        os.environ["RULESDSL_CACHE_DIR"] = "off"
        compiled = compile_paths([corpus]).rulesets
        start = time.perf_counter()
        files = html.render(compiled)
        seconds = time.perf_counter() - start
        out = work / "out-synth"
        write_output(out, {f"site/{name}": text for name, text in files.items()})
        pages = {name: len(text.encode()) for name, text in files.items() if name.endswith(".html")}
        biggest = max(pages, key=lambda name: pages[name])
        parts = [name for name in files if name == "search-index.js" or name.startswith("search/")]
        index = sum(len(files[name].encode()) for name in parts)
        print(
            f"{args.lifepaths:,} lifepaths: HTML rendering {seconds:.1f} s, {len(pages):,} pages, biggest "
            f"{biggest} {pages[biggest] / 1000:.0f} KB, search index {index / 1000:.0f} KB in {len(parts)} files "
            "(loaded on first use)"
        )
        figures = browser_figures(out / "site", biggest, args.repeats)
        print(
            f"  load of the biggest page in Chromium: {figures['load'] * 1000:.0f} ms (navigation to load event, "
            f"median); the page's own loadEventEnd {figures['load_js'] * 1000:.0f} ms"
        )
        print(
            f"  search: index loaded in {figures['index_load'] * 1000:.0f} ms once; a query takes "
            f"{figures['query_median'] * 1000:.1f} ms (median of {len(QUERIES)} queries, worst "
            f"{figures['query_worst'] * 1000:.1f} ms); keystroke to results shown "
            f"{figures['typed_median'] * 1000:.0f} ms"
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
