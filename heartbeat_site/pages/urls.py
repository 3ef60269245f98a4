"""HTML pages. The control token never appears here: it travels in the URL fragment."""

from django.urls import path

from heartbeat_site.pages import build, views

urlpatterns = [
    path("", views.home, name="home"),
    path("myths/", views.myths, name="myths"),
    path("build/", build.build_page, name="build"),
    path("observe/", views.observe_page, name="observe"),
    path("runs/<str:run_id>/", views.run_page, name="run"),
    path("compare/<str:comparison_id>/", views.compare_page, name="compare"),
    path("scenarios/<slug:name>/", views.scenario_link, name="scenario-link"),
    path("s/<slug:scenario_id>", views.shared_scenario, name="shared-scenario"),
    path("s/<slug:scenario_id>/", views.shared_scenario),
    path("r/<slug:recipe_id>", views.recipe_page, name="recipe"),
    path("r/<slug:recipe_id>/", views.recipe_page),
    path("lang/<str:code>/", views.switch_language, name="switch-language"),
]
