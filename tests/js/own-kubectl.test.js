import { test } from "node:test";
import assert from "node:assert/strict";
import { kubectlLines } from "../../static/js/own-kubectl.js";

test("a viewer gets the watch line only", () => {
  assert.deepEqual(kubectlLines("http://127.0.0.1:8000", "abc", null), {
    watch: "kubectl --server http://127.0.0.1:8000/k8s/runs/abc get nodes -w",
    control: null,
  });
});

test("over HTTP the control token goes in the server URL, over HTTPS in --token", () => {
  assert.equal(kubectlLines("http://127.0.0.1:8000", "abc", "T0k").control,
    "kubectl --server http://control:T0k@127.0.0.1:8000/k8s/runs/abc cordon node-1");
  assert.equal(kubectlLines("https://class.example.org", "abc", "T0k").control,
    "kubectl --server https://class.example.org/k8s/runs/abc --token T0k cordon node-1");
});
