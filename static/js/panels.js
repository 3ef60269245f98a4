// @ts-check
// The run page's panels as tabs on a phone or a tablet (css/small-screens.css). Below 600 px one
// panel fills the screen under the top bar: API traffic first, then the cluster, flows, timeline,
// kubectl, why, diagrams and (on a trainer's page) the fault buttons. From 600 to 1023 px the
// cluster stays on the left and the others are tabs on the right. From 1024 px the three columns
// show everything at once and the side panel keeps its own tabs, as before.
//
// A panel not shown keeps its box (class `off`: not drawn, its content skipped), so its scroll
// position and its size survive a switch and nothing is laid out again. The page renders the side
// panel's tabs (flows, kubectl...) only while one of them is shown (`showTab`), and the cluster
// only while it is shown (`clusterShown`): a phone showing the sequence diagram does not also
// draw the flows and the cluster every frame.

export const NARROW = "(max-width: 1023px)";
const PHONE = "(max-width: 599px)";
const SIDE_TABS = ["flows", "why", "kubectl", "diagrams"];
const VIEWS = ["traffic", "cluster", "timeline", ...SIDE_TABS, "faults"];

/** The element each tab controls (its tabpanel). */
const PANEL_OF = {
  traffic: "#panel-traffic", cluster: "#panel-cluster", timeline: "#panel-timeline",
  flows: "#panel-side", why: "#panel-side", kubectl: "#panel-side", diagrams: "#panel-side", faults: "#panel-side",
};

export class PanelTabs {
  /**
   * @param {HTMLElement} tablist  the bar of `[role=tab][data-view]` buttons
   * @param {HTMLElement} grid  the panels' grid (.run-grid)
   * @param {{active: string|null, showTab: (name: string|null) => void, onNarrow?: (narrow: boolean) => void,
   *   onCluster?: () => void}} page
   *   `active`: the side tab the page renders now; `showTab(name)`: the page renders that side
   *   tab (null: none of them is on the screen); `onNarrow(narrow)`: the layout went below
   *   1024 px or back above; `onCluster()`: the cluster panel is on the screen again
   */
  constructor(tablist, grid, { active, showTab, onNarrow, onCluster }) {
    this.tablist = tablist;
    this.grid = grid;
    this.showTab = showTab;
    this.onNarrow = onNarrow;
    this.onCluster = onCluster;
    if (!document.querySelector("#faults")) tablist.querySelector('[data-view="faults"]')?.remove(); // a viewer's page
    this.tabs = [.../** @type {NodeListOf<HTMLElement>} */ (tablist.querySelectorAll('[role="tab"][data-view]'))];
    /** @type {HTMLElement} */
    this.cluster = grid.querySelector(".cluster-panel");
    /** @type {HTMLElement} */
    this.traffic = grid.querySelector(".seq-panel");
    /** @type {HTMLElement} */
    this.side = grid.querySelector(".side-panel");
    this.view = "traffic";
    this.sideTab = active; // the side tab the page renders now
    this.lastSide = active ?? "flows"; // the one to give back to the side panel on a wide screen
    this.narrowQuery = matchMedia(NARROW);
    this.phoneQuery = matchMedia(PHONE);
    // Read at every frame by the page: kept here (a query's `matches` is evaluated at each read).
    this.narrow = this.narrowQuery.matches;
    this.narrowQuery.addEventListener("change", (e) => {
      this.narrow = e.matches;
      this.#apply();
      this.onNarrow?.(this.narrow);
    });
    this.phoneQuery.addEventListener("change", () => this.#apply());
    tablist.addEventListener("click", (e) => {
      const tab = /** @type {HTMLElement | null} */ (/** @type {Element} */ (e.target).closest('[role="tab"]'));
      if (tab) this.select(tab.dataset.view);
    });
    tablist.addEventListener("keydown", (e) => this.#arrow(e));
    this.#apply();
    grid.classList.add("tabbed"); // css/small-screens.css: the first paint's choice of panel gives way to the tabs'
  }

  /** False while the cluster panel is not on the screen (a phone showing another tab). */
  get clusterShown() {
    return !this.cluster.classList.contains("off");
  }

  /** Shows a panel (a user's tap on its tab). */
  select(view) {
    if (!VIEWS.includes(view)) return;
    this.view = view;
    this.#apply();
  }

  /**
   * The page showed something of its own accord: a side tab (an arrow's "why", a pod's eviction
   * flow, a lesson step's tab) or a lesson step's "cluster" or "traffic". On a small screen that
   * panel comes forward; `null` (no side tab rendered) changes nothing on the screen.
   */
  follow(name) {
    if (name === null || SIDE_TABS.includes(name)) this.sideTab = name;
    if (SIDE_TABS.includes(name)) this.lastSide = name;
    if (!this.narrow || !VIEWS.includes(name) || name === this.view) return;
    this.view = name;
    this.#apply();
  }

  #apply() {
    const panels = [this.cluster, this.traffic, this.side];
    const clusterWas = this.clusterShown;
    const labelled = Object.values(PANEL_OF).map((sel) => document.querySelector(sel));
    for (const el of new Set(labelled)) {
      el?.removeAttribute("role");
      el?.removeAttribute("aria-labelledby");
    }
    if (!this.narrow) {
      for (const panel of panels) panel.classList.remove("off");
      delete this.traffic.dataset.part;
      delete this.side.dataset.part;
      if (this.sideTab === null) this.#showTab(this.lastSide); // the side panel is on the screen again
      if (!clusterWas) this.onCluster?.();
      return;
    }
    const tablet = !this.phoneQuery.matches;
    if (tablet && this.view === "cluster") this.view = "traffic"; // always on the left there
    const view = this.view;
    const shown = view === "cluster" ? this.cluster
      : view === "traffic" || view === "timeline" ? this.traffic : this.side;
    for (const panel of panels) panel.classList.toggle("off", panel !== shown && !(tablet && panel === this.cluster));
    this.traffic.dataset.part = view === "timeline" ? "timeline" : "traffic";
    this.side.dataset.part = view === "faults" ? "faults" : "tabs";
    const tabpanel = document.querySelector(PANEL_OF[view]);
    tabpanel.setAttribute("role", "tabpanel");
    tabpanel.setAttribute("aria-labelledby", `view-tab-${view}`);
    for (const tab of this.tabs) {
      const selected = tab.dataset.view === view;
      tab.setAttribute("aria-selected", String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (selected) this.#reveal(tab);
    }
    const sideTab = SIDE_TABS.includes(view) ? view : null;
    if (sideTab !== this.sideTab) this.#showTab(sideTab);
    if (!clusterWas && this.clusterShown) this.onCluster?.();
  }

  #showTab(name) {
    this.sideTab = name;
    this.showTab(name);
  }

  /** Scrolls the tab bar (not the page) so the selected tab is in view. */
  #reveal(tab) {
    const bar = this.tablist;
    const left = tab.offsetLeft - bar.offsetLeft;
    if (left < bar.scrollLeft) bar.scrollLeft = left;
    else if (left + tab.offsetWidth > bar.scrollLeft + bar.clientWidth) {
      bar.scrollLeft = left + tab.offsetWidth - bar.clientWidth;
    }
  }

  /** Arrow keys, Home and End move between the tabs shown (and select one: automatic activation). */
  #arrow(e) {
    const shown = this.tabs.filter((tab) => tab.offsetParent !== null);
    const at = shown.indexOf(/** @type {Element} */ (e.target).closest('[role="tab"]'));
    if (at < 0) return;
    const to = { ArrowRight: at + 1, ArrowLeft: at - 1, Home: 0, End: shown.length - 1 }[e.key];
    if (to === undefined) return;
    e.preventDefault();
    const tab = shown[(to + shown.length) % shown.length];
    this.select(tab.dataset.view);
    tab.focus();
  }
}
