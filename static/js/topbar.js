// @ts-check
// The top bar's menu on phones and tablets (css/small-screens.css): the links (myths, theme,
// language) fold behind a button so the bar stays one line. Without this script the links stay
// in the bar, as on a wide screen.
(function () {
  "use strict";
  var bar = document.querySelector(".topbar");
  var button = document.getElementById("menu-toggle");
  if (!bar || !button) return;

  function setOpen(open) {
    bar.classList.toggle("menu-open", open);
    button.setAttribute("aria-expanded", String(open));
  }

  bar.classList.add("has-menu");
  button.hidden = false;
  button.addEventListener("click", function () {
    setOpen(!bar.classList.contains("menu-open"));
  });
  // Escape closes it and gives the focus back to the button; so does a tap outside the bar.
  bar.addEventListener("keydown", function (/** @type {KeyboardEvent} */ e) {
    if (e.key === "Escape" && bar.classList.contains("menu-open")) {
      setOpen(false);
      button.focus();
    }
  });
  document.addEventListener("pointerdown", function (e) {
    if (bar.classList.contains("menu-open") && !bar.contains(/** @type {Node} */ (e.target))) setOpen(false);
  });
})();
