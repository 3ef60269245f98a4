// @ts-check
// Written into the run page (not a module): its scripts start after the page's first paint.
//
// A phone on classroom Wi-Fi paints the page as the server wrote it (a lesson's bar and its
// question, the panels' frames) once the HTML and the stylesheets are in; the run page's modules
// (about 45, with d3-selection) build on that and need more than the link gives in a second.
// Fetched beside the stylesheets they share the link with what the first paint awaits, so they
// are asked for here, after it: the whole module graph at once (modulepreload, resolved through
// the page's import map), then the scripts in the page's order (async false keeps it).
(function () {
  var plan = JSON.parse(document.getElementById("after-first-paint").textContent);
  var started = false;
  // Each element added starts a request: about 1 ms of the main thread apiece on a loaded laptop,
  // 45 of them in one task made it long (over 200 ms at a phone's speed, most of the page's total
  // blocking time). So they are added a few milliseconds' worth at a time, each slice in a task of
  // its own, the scripts after the last preload (the browser's input and painting run between).
  var SLICE_MS = 4;
  function preload(href) {
    var link = document.createElement("link");
    link.rel = "modulepreload";
    link.href = href;
    document.head.appendChild(link);
  }
  function script(entry) {
    var element = document.createElement("script");
    if (entry.module) element.type = "module";
    element.src = entry.src;
    element.async = false;
    document.body.appendChild(element);
  }
  function load() {
    if (started) return;
    started = true;
    var steps = plan.preload.map(function (href) { return function () { preload(href); }; })
      .concat(plan.scripts.map(function (entry) { return function () { script(entry); }; }));
    var next = 0;
    (function slice() {
      var until = performance.now() + SLICE_MS;
      do {
        steps[next]();
        next += 1;
      } while (next < steps.length && performance.now() < until);
      if (next < steps.length) setTimeout(slice, 0);
    })();
  }
  // Once the browser reports the first contentful paint (then it is on the screen); where it
  // reports no paints, after the next frame. A page opened in a background tab paints nothing:
  // it loads on a timer instead.
  var observes = window.PerformanceObserver && (PerformanceObserver.supportedEntryTypes || []).indexOf("paint") >= 0;
  if (observes) {
    new PerformanceObserver(function (list, observer) {
      if (list.getEntriesByName("first-contentful-paint").length) {
        observer.disconnect();
        setTimeout(load, 0);
      }
    }).observe({ type: "paint", buffered: true });
  } else {
    requestAnimationFrame(function () { setTimeout(load, 0); });
  }
  setTimeout(load, 3000);
})();
