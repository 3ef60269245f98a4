// @ts-check
// "Viewers follow me" (docs/websocket-protocol.md, "follow"). The trainer's page, while its toggle is on, sends
// where it looks as commands (POST /api/runs/<id>/commands: {"action": "focus", "node", "tab"}); the server
// broadcasts each as a `follow` message, and gives a page that joins or reconnects where things stand right after
// its snapshot. A viewer's page takes the trainer's node and panel until its user picks one themselves; then a
// "Follow the trainer" button brings it back.

export class Follow {
  /**
   * @param {object} page  `control` (the trainer's page), `command(cmd)` (sends a command), `focus(node)` and
   *   `tab(name)` (show the trainer's node and panel without counting as the user's pick), `where()` ({node, tab}).
   * @param {HTMLInputElement|null} toggle  the trainer's "Viewers follow me" checkbox
   * @param {HTMLButtonElement|null} back  the viewer's "Follow the trainer" button
   */
  constructor(page, toggle, back) {
    /** @type {{control: boolean, command(cmd: object): unknown, focus(node: string): void, tab(name: string): void,
     *   where(): {node?: string | null, tab?: string}}} */
    this.page = page;
    this.toggle = toggle;
    this.back = back;
    this.on = false; // the trainer asks viewers to follow
    this.away = false; // this viewer picked something of their own meanwhile
    this.last = {}; // the trainer's latest node and panel
    toggle?.addEventListener("change", () => this.#setOn(toggle.checked));
    back?.addEventListener("click", () => this.#rejoin());
    // A tab or panel the user opens themselves (the page's own changes are no clicks)
    document.addEventListener("click", (e) => {
      const target = /** @type {Element} */ (e.target);
      if (e.isTrusted && target.closest?.("[data-tab], .view-tabs [role=tab]")) this.picked();
    });
  }

  /** The trainer's page looked somewhere else (a node, a panel): sent while the toggle is on. */
  looked(where) {
    if (!this.page.control || !this.on) return;
    const changed = Object.entries(where).some(([key, value]) => value && this.last[key] !== value);
    if (!changed) return;
    Object.assign(this.last, where);
    this.page.command({ action: "focus", ...this.#clean(where) });
  }

  /** Whether this viewer's page shows the trainer's node now (nothing else should move its focus). */
  get following() {
    return !this.page.control && this.on && !this.away;
  }

  /** The user of a viewer's page picked a node or a panel of their own. */
  picked() {
    if (this.page.control || !this.on || this.away) return;
    this.away = true;
    if (this.back) this.back.hidden = false;
  }

  /**
   * A `follow` message: `on` (the toggle), the trainer's `node` and `tab`, or both (where things stand, sent to a
   * page that joins or reconnects: a viewer who picked their own node before keeps it).
   */
  onMessage(msg) {
    if (this.page.control) {
      // the trainer's page reloaded, or another of the trainer's pages turned it: the toggle says what viewers get
      if (typeof msg.on === "boolean" && msg.on !== this.on) {
        this.on = msg.on;
        this.last = {};
        if (this.toggle) this.toggle.checked = msg.on;
      }
      return;
    }
    if (typeof msg.on === "boolean" && msg.on !== this.on) {
      this.on = msg.on;
      this.away = false;
      if (this.back) this.back.hidden = true;
    }
    if (msg.node || msg.tab) {
      this.on = true; // a focus comes only while the trainer's toggle is on
      if (msg.node) this.last.node = msg.node;
      if (msg.tab) this.last.tab = msg.tab;
    }
    if (this.on && !this.away) this.#apply();
  }

  #setOn(on) {
    this.on = on;
    this.last = {};
    this.page.command({ action: "follow", on });
    if (on) this.looked(this.page.where());
  }

  #rejoin() {
    this.away = false;
    if (this.back) this.back.hidden = true;
    this.#apply();
  }

  #apply() {
    if (this.last.node) this.page.focus(this.last.node);
    if (this.last.tab) this.page.tab(this.last.tab);
  }

  #clean(where) {
    return Object.fromEntries(Object.entries(where).filter(([, value]) => value));
  }
}
