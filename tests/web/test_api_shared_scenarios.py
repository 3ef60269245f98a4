"""Saved scenarios get links that never change meaning: ``/s/<id>``, the id derived from the document."""

from __future__ import annotations

import json
import re

import pytest

from heartbeat_site.live.models import Run
from simulation.lessons import builtin_drills

from .conftest import post_json, small_document

pytestmark = [pytest.mark.django_db, pytest.mark.persistence]


def _save(api, document: dict) -> dict:
    response = post_json(api, "/api/scenarios", {"document": document})
    assert response.status_code in (200, 201), response.content
    return response.json()


def _page_document(response) -> dict:
    config = re.search(r'<script id="page-config" type="application/json">(.*?)</script>', response.content.decode())
    assert config, "the page has no configuration"
    return json.loads(config.group(1))["document"]


def test_saving_answers_with_an_id_and_its_link(api):
    saved = _save(api, small_document("my-class"))
    assert re.fullmatch(r"[a-z2-7]{10}", saved["id"])
    assert saved["url"] == f"http://testserver/s/{saved['id']}"
    assert saved["name"] == "my-class"


def test_the_same_document_saved_twice_gives_the_same_id(api):
    first = _save(api, small_document("my-class"))
    reordered = dict(reversed(list(small_document("my-class").items())))
    assert _save(api, reordered)["id"] == first["id"]
    # written out with its defaults, it is still the same scenario
    assert _save(api, first["document"])["id"] == first["id"]
    assert _save(api, small_document("my-class", nodes=4))["id"] != first["id"]


def test_a_link_keeps_its_document_when_the_name_is_saved_again(api):
    first = _save(api, small_document("my-class"))
    second = _save(api, small_document("my-class", nodes=5))
    assert second["id"] != first["id"]
    old_page = api.get(f"/s/{first['id']}")
    assert old_page.status_code == 200
    assert _page_document(old_page) == first["document"]
    assert _page_document(old_page)["cluster"]["nodes"] == 3
    assert _page_document(api.get(f"/s/{second['id']}"))["cluster"]["nodes"] == 5


def test_the_link_page_shows_the_scenario_with_its_start_buttons(api):
    saved = _save(api, small_document("my-class"))
    page = api.get(f"/s/{saved['id']}")
    text = page.content.decode()
    assert "Three nodes" in text
    assert text.count(f'data-shared="{saved["id"]}"') == 3  # the card and its two start buttons
    assert 'id="scenario-status"' not in text  # it does not start a run by itself


def test_an_unknown_link_is_404(api):
    assert api.get("/s/aaaaaaaaaa").status_code == 404


def test_a_saved_scenarios_name_link_opens(api):
    _save(api, small_document("my-class"))
    page = api.get("/scenarios/my-class/")
    assert page.status_code == 200
    assert 'data-scenario="my-class"' in page.content.decode()
    assert api.get("/scenarios/never-saved/").status_code == 404


def test_a_runs_detail_carries_its_own_document(api, dispatched):
    document = small_document("inline-only")
    response = post_json(api, "/api/runs", {"document": document})
    assert response.status_code == 201
    detail = api.get(f"/api/runs/{response.json()['id']}").json()
    assert detail["document"]["name"] == "inline-only"
    assert detail["document"]["cluster"]["nodes"] == 3
    assert api.get("/api/scenarios/inline-only").status_code == 404  # what the run page no longer asks for


def test_a_drills_document_stays_hidden_until_the_reveal(api, dispatched):
    response = post_json(api, "/api/runs", {"drill": builtin_drills()[0].name})
    assert response.status_code == 201, response.content
    run_id = response.json()["id"]
    assert api.get(f"/api/runs/{run_id}").json()["document"] is None  # its faults would name the cause
    Run.objects.filter(pk=run_id).update(revealed=True)
    assert api.get(f"/api/runs/{run_id}").json()["document"]["faults"]
