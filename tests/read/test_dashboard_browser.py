"""The dashboard drawn by a real headless Chromium (fixtures/browser.py): every chart is
drawn without a console error and without the network, hovering shows exact values,
the provider filter and the stacking switch change what is shown, and the page fits a
phone. Without Chromium these tests skip saying why; with ``AGENTLAKE_REQUIRE_CHROMIUM=1``
(CI, which installs it) its absence is an error."""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import duckdb
import pytest

from agentlake.read.dashboard import write_dashboard
from agentlake.read.reports import ReportFilter, report
from fixtures.browser import ChromiumMissing, OpenedPage, chromium, open_dashboard

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHARTS = ("tokens", "cost", "cache", "saved", "projects", "sessions", "hours")
TZ = "Europe/Berlin"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    try:
        with chromium() as opened:
            yield opened
    except ChromiumMissing as missing:
        if os.environ.get("AGENTLAKE_REQUIRE_CHROMIUM") == "1":
            pytest.fail(f"{missing}: install the chromium package")
        pytest.skip(str(missing))


@pytest.fixture(scope="module")
def dashboard(
    demo_home_catalog: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory
) -> Path:
    """The demo home's dashboard, written once."""
    out = tmp_path_factory.mktemp("dashboard") / "usage.html"
    write_dashboard(demo_home_catalog[1], "default", ReportFilter(tz=TZ), out)
    return out


@pytest.fixture(scope="module")
def page(browser: Browser, dashboard: Path) -> Iterator[OpenedPage]:
    """The dashboard opened once: a test that changes the filter or the stacking puts
    it back as it was."""
    with open_dashboard(browser, dashboard) as opened:
        yield opened


def _kpi(opened: OpenedPage, name: str) -> str:
    return opened.page.locator(f'[data-kpi="{name}"] .value').inner_text()


def _distinct_colours(png: bytes) -> int:
    from PIL import Image

    with Image.open(io.BytesIO(png)) as image:
        colours = image.convert("RGB").getcolors(maxcolors=1 << 16)
    return len(colours) if colours is not None else 1 << 16


def test_every_chart_is_drawn_without_an_error(page: OpenedPage) -> None:
    body = page.page.locator("body")
    assert body.get_attribute("data-error") is None
    assert page.problems() == []
    for name in CHARTS:
        chart = page.page.locator(f"#chart-{name}")
        assert chart.locator("canvas").count() >= 1, name
        box = chart.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 150, name
        # A drawn chart has axes, labels and bars or cells: many colours, not a blank box.
        assert _distinct_colours(chart.screenshot()) > 20, name
    assert page.page.locator("#sessions tbody tr").count() == 10
    assert page.page.locator("#legend li").count() == 4  # the demo home's providers


def test_the_numbers_shown_are_the_reports(
    page: OpenedPage, demo_home_catalog: tuple[Path, Path]
) -> None:
    totals = report(demo_home_catalog[1], "default", "daily", ReportFilter(tz=TZ)).totals
    assert _kpi(page, "calls") == f"{totals['calls']:,}"
    assert _kpi(page, "cost") == f"${totals['cost_usd']:,.2f}"
    assert (
        page.page.locator('[data-kpi="tokens"] .note').inner_text() == f"{totals['total_tokens']:,}"
    )


def test_hovering_a_bar_shows_its_exact_value(
    page: OpenedPage, demo_home_catalog: tuple[Path, Path]
) -> None:
    projects = report(demo_home_catalog[1], "default", "project", ReportFilter(tz=TZ)).rows
    costliest = projects.to_pylist()[0]
    canvas = page.page.locator("#chart-projects canvas").first
    canvas.scroll_into_view_if_needed()
    box = canvas.bounding_box()
    assert box is not None
    # The costliest project's bar is the top one of ten, and spans most of the plot.
    page.page.mouse.move(box["x"] + box["width"] * 0.5, box["y"] + box["height"] * 0.05)
    tooltip = page.page.locator(".bk-tooltip-content").first
    tooltip.wait_for(state="visible", timeout=5_000)
    rows = dict(line.split(":\t", 1) for line in tooltip.inner_text().splitlines())
    assert rows["project"] == costliest["project_path"]
    assert float(rows["cost"].lstrip("$").replace(",", "")) == pytest.approx(
        costliest["cost_usd"], abs=1e-6
    )
    assert int(rows["tokens"].replace(",", "")) == costliest["total_tokens"]
    assert int(rows["calls"].replace(",", "")) == costliest["calls"]


def test_the_provider_filter_changes_what_is_shown(
    page: OpenedPage, demo_home_catalog: tuple[Path, Path]
) -> None:
    before = {name: _kpi(page, name) for name in ("calls", "cost", "tokens")}
    page.page.select_option("#provider", label="codex")
    page.page.wait_for_function("document.body.dataset.provider === 'codex'")
    codex = report(demo_home_catalog[1], "default", "daily", ReportFilter(tz=TZ, provider="codex"))
    assert _kpi(page, "calls") == f"{codex.totals['calls']:,}" != before["calls"]
    assert _kpi(page, "cost") != before["cost"]
    rows = page.page.locator("#sessions tbody tr td:nth-child(2)").all_inner_texts()
    assert rows and set(rows) == {"codex"}
    assert page.page.locator("#legend li").all_inner_texts() == ["codex"]
    page.page.select_option("#provider", label="all providers")
    page.page.wait_for_function("document.body.dataset.provider === ''")
    assert {name: _kpi(page, name) for name in before} == before
    assert page.problems() == []


def test_the_daily_charts_stack_by_provider_or_model(
    page: OpenedPage, demo_home_catalog: tuple[Path, Path]
) -> None:
    page.page.click('[data-stack="model"]')
    page.page.wait_for_function("document.body.dataset.stacked === 'model'")
    with duckdb.connect(str(demo_home_catalog[1]), read_only=True) as con:
        models = con.execute(
            "SELECT count(DISTINCT coalesce(model, '<unknown>')) FROM usage"
        ).fetchone()
    assert models is not None
    assert page.page.locator("#legend li").count() == min(models[0], 12)
    assert page.page.get_attribute('[data-stack="model"]', "aria-pressed") == "true"
    page.page.click('[data-stack="provider"]')
    page.page.wait_for_function("document.body.dataset.stacked === 'provider'")
    assert page.page.locator("#legend li").count() == 4


def test_the_page_fits_a_phone(browser: Browser, dashboard: Path) -> None:
    with open_dashboard(browser, dashboard, width=390, height=844) as opened:
        assert opened.problems() == []
        overflow = opened.page.evaluate(
            "document.scrollingElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 1
        for name in CHARTS:
            box = opened.page.locator(f"#chart-{name}").bounding_box()
            assert box is not None and 250 <= box["width"] <= 390, name


def test_an_empty_catalog_gives_a_page_that_says_so(
    browser: Browser, demo_home_catalog: tuple[Path, Path], tmp_path: Path
) -> None:
    out = tmp_path / "empty.html"
    catalog = tmp_path / "catalog.duckdb"
    shutil.copy(demo_home_catalog[1], catalog)
    from datetime import date

    write_dashboard(catalog, "default", ReportFilter(since=date(2100, 1, 1)), out)
    with open_dashboard(browser, out) as opened:
        # Bokeh warns that a chart without data has no range to fit: no error, though.
        assert opened.problems(warnings=False) == []
        assert opened.page.locator("#empty").is_visible()
        assert _kpi(opened, "calls") == "0"
