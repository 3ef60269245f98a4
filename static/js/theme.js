// @ts-check
// Loaded in <head> (not a module) so the chosen theme applies before the first paint.
(function () {
  var KEY = "heartbeat-theme";
  var params = new URLSearchParams(location.search);
  var theme = params.get("theme") || localStorage.getItem(KEY) || "default";
  document.documentElement.dataset.theme = theme;
  document.addEventListener("DOMContentLoaded", function () {
    var button = document.getElementById("theme-toggle");
    if (!button) return;
    button.setAttribute("aria-pressed", String(theme === "projector"));
    button.addEventListener("click", function () {
      theme = document.documentElement.dataset.theme === "projector" ? "default" : "projector";
      document.documentElement.dataset.theme = theme;
      localStorage.setItem(KEY, theme);
      button.setAttribute("aria-pressed", String(theme === "projector"));
    });
  });
})();
