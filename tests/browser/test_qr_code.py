"""The QR code the trainer puts on the projector, read back by a QR decoder (zxing-cpp, the reader many phone and
desktop scanners use): it decodes to the run's viewer link, and never to the control link."""

from __future__ import annotations

import base64

import pytest
import zxingcpp
from playwright.sync_api import expect

from .conftest import create_run
from .test_classroom import open_page, wait_for_cluster

pytestmark = pytest.mark.live

# The <img> as the page draws it (its size on screen), in grey levels, one byte a pixel, row after row.
SHOWN_PIXELS = """() => {
  const image = document.getElementById("qr-image");
  const box = image.getBoundingClientRect();
  const canvas = document.createElement("canvas");
  canvas.width = Math.round(box.width);
  canvas.height = Math.round(box.height);
  const context = canvas.getContext("2d");
  context.fillStyle = "white";
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.drawImage(image, 0, 0, canvas.width, canvas.height);
  const rgba = context.getImageData(0, 0, canvas.width, canvas.height).data;
  let grey = "";
  for (let i = 0; i < rgba.length; i += 4) grey += String.fromCharCode((rgba[i] + rgba[i + 1] + rgba[i + 2]) / 3 | 0);
  return {width: canvas.width, height: canvas.height, grey: btoa(grey)};
}"""


def decoded(pixels: dict) -> list[str]:
    grey = base64.b64decode(pixels["grey"])
    image = memoryview(grey).cast("B", (pixels["height"], pixels["width"]))
    return [code.text for code in zxingcpp.read_barcodes(image, formats=zxingcpp.BarcodeFormat.QRCode)]


def test_the_qr_code_on_the_projector_decodes_to_the_viewer_link(browser, stack, offsite):
    run = create_run(stack, speed=5)
    trainer = open_page(browser, run["control_url"], offsite)
    wait_for_cluster(trainer)
    trainer.locator(".share summary").click()
    trainer.locator("#show-qr").click()
    expect(trainer.locator("#qr-dialog")).to_be_visible()
    trainer.wait_for_function("() => document.getElementById('qr-image').naturalWidth > 0")

    assert decoded(trainer.evaluate(SHOWN_PIXELS)) == [run["viewer_url"]]
    assert run["control_token"] not in run["viewer_url"]
    assert trainer.errors == [] and trainer.console_errors == [], (trainer.errors, trainer.console_errors)
    assert offsite.offsite == []
