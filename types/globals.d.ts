// What the pages' modules find on `window` from outside them (tsc reads this: jsconfig.json).

interface Window {
  /** d3-selection's browser build (static/vendor/d3-selection.min.js), a classic script loaded before the modules;
   *  the package ships no types. */
  d3: any;
  /** mermaid's browser build (static/vendor/mermaid.min.js), loaded on first need (static-diagrams.js). */
  mermaid?: { initialize(config: object): void; render(id: string, text: string): Promise<{ svg: string }> };
  /** The run or comparison page's state, for the browser tests and benchmarks to read (run-page.js, compare-page.js). */
  heartbeat?: object;
  /** The run page's replay, for the browser tests to read and drive (replay.js). */
  heartbeatReplay?: object;
}
