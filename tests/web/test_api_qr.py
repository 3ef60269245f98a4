"""``GET /api/runs/<id>/qr.svg``: the QR code the room scans draws exactly the QR code of the run's viewer link, and a
QR decoder (zxing-cpp) reads the link back from what it draws."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest
import segno
import zxingcpp

SVG = "{http://www.w3.org/2000/svg}"


def drawn_modules(svg: bytes) -> set[tuple[int, int]]:
    """The dark modules a segno SVG draws: its one path of horizontal runs ("M x y.5 h n", "m dx dy h n")."""
    root = ET.fromstring(svg)
    path = next(p for p in root.iter(f"{SVG}path") if p.get("class") == "qrline")
    group = root.find(f"{SVG}g")
    scale = float(re.fullmatch(r"scale\((\d+)\)", group.get("transform") if group is not None else "").group(1))
    assert scale >= 8  # large enough for a projector
    dark: set[tuple[int, int]] = set()
    x = y = 0.0
    for op, a, b in re.findall(r"([MmHh])(-?[\d.]+)(?: (-?[\d.]+))?", path.get("d", "")):
        if op == "M":
            x, y = float(a), float(b)
        elif op == "m":
            x, y = x + float(a), y + float(b)
        else:
            run = float(a)
            dark.update((int(x + i), int(y)) for i in range(int(run)))
            x += run
    return dark


def decoded(dark: set[tuple[int, int]], pixels: int = 4) -> list[str]:
    """What a QR decoder reads in the modules drawn black on white, ``pixels`` to a module (the border included)."""
    size = max(max(x, y) for x, y in dark) + 5  # the 4-module quiet zone on the far sides too
    grey = bytearray(b"\xff" * (size * pixels) ** 2)
    for x, y in dark:
        for row in range(y * pixels, (y + 1) * pixels):
            grey[row * size * pixels + x * pixels:row * size * pixels + (x + 1) * pixels] = b"\x00" * pixels
    image = memoryview(bytes(grey)).cast("B", (size * pixels, size * pixels))
    return [code.text for code in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)]


def expected_modules(url: str, border: int = 4) -> set[tuple[int, int]]:
    matrix = segno.make(url, error="m", micro=False).matrix
    return {(col + border, row + border) for row, bits in enumerate(matrix) for col, bit in enumerate(bits) if bit}


@pytest.mark.django_db
def test_the_qr_code_is_the_viewer_link(api, new_run):
    body, run_id, token = new_run()
    response = api.get(f"/api/runs/{run_id}/qr.svg")
    assert response.status_code == 200 and response["Content-Type"] == "image/svg+xml"
    svg = response.content
    assert body["viewer_url"].encode() in svg and token.encode() not in svg
    assert drawn_modules(svg) == expected_modules(body["viewer_url"])
    assert decoded(drawn_modules(svg)) == [body["viewer_url"]]
    assert drawn_modules(svg) != expected_modules(body["viewer_url"] + "x")


@pytest.mark.django_db
def test_behind_a_proxy_the_code_has_the_public_link(api, new_run, settings):
    settings.HEARTBEAT = {**settings.HEARTBEAT, "PUBLIC_URL": "https://class.example.org"}
    _, run_id, _ = new_run()
    svg = api.get(f"/api/runs/{run_id}/qr.svg").content
    assert drawn_modules(svg) == expected_modules(f"https://class.example.org/runs/{run_id}/")


@pytest.mark.django_db
def test_no_qr_code_for_an_unknown_run(api):
    response = api.get("/api/runs/nosuchrun/qr.svg")
    assert (response.status_code, response.json()["error"]) == (404, "unknown-run")
