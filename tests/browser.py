"""Headless Debian Chromium driven by Selenium, for the tests that look at the console in a real browser."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
#: Chromium's own traffic and first-run work off, so a test's page is all the browser does.
QUIET_FLAGS = ("--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run")


def chromium(*, window: str, extra_flags: tuple[str, ...] = ()) -> Iterator[Any]:
    """A driver for a ``window`` (``WIDTHxHEIGHT``) sized headless Chromium, quit afterwards; the test skips with one
    line where Selenium, Chromium or its driver is missing."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        pytest.skip("no browser test: selenium is not installed (scripts/setup.sh installs it)")
    if not (CHROMIUM.exists() and CHROMEDRIVER.exists()):
        pytest.skip("no browser test: Debian's chromium and chromium-driver are not installed (.ci/run installs them)")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", *extra_flags, f"--window-size={window.replace('x', ',')}"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(str(CHROMEDRIVER)), options=options)
    try:
        yield driver
    finally:
        driver.quit()
