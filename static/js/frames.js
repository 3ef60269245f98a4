// @ts-check
// One pass of DOM writes per frame, and at most about ten frames a second: websocket frames,
// the clock and the little animations all ask for the next pass instead of writing on their own,
// so the browser lays out and paints once per 100 ms however much arrived.

export class FrameScheduler {
  /**
   * @param {() => void} render  the pass: reads models, writes the DOM (never reads layout after)
   * @param {{interval?: number, prepare?: () => void}} options  `interval`: minimum time between
   *   two passes (ms); `prepare`: runs when the pass is asked for (in that task, before the
   *   animation frame), for what must not follow the pass's writes (a scroll lays them out)
   */
  constructor(render, { interval = 95, prepare = null } = {}) {
    this.render = render;
    this.prepare = prepare;
    this.interval = interval;
    this.raf = 0;
    this.timer = 0;
    this.last = -Infinity;
    this.passes = 0; // for tests and the benchmark
  }

  /**
   * Asks for a pass: in the next animation frame, or when `interval` has passed since the last.
   * `soon`: in the next animation frame in any case (the second half of a pass split in two).
   */
  request(soon = false) {
    if (this.raf || (this.timer && !soon)) return;
    clearTimeout(this.timer);
    this.timer = 0;
    const wait = soon ? 0 : this.last + this.interval - performance.now();
    // `soon` is asked from inside a pass: even with no wait, `prepare` must not run among its writes
    if (wait > 1 || soon) {
      this.timer = setTimeout(() => {
        this.timer = 0;
        this.#frame();
      }, wait);
    } else {
      this.#frame();
    }
  }

  #frame() {
    this.prepare?.();
    this.raf = requestAnimationFrame(() => {
      this.raf = 0;
      this.last = performance.now();
      this.passes++;
      this.render();
    });
  }
}
