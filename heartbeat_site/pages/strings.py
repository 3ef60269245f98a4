"""Every text the page scripts show, translated by gettext like the templates.

The scripts get this dict as JSON (see `ui_strings`), so one .po file covers the whole page.
Placeholders in braces are filled in by the scripts (static/js/i18n.js).
"""

from __future__ import annotations

from django.utils.translation import gettext_lazy as _

from heartbeat_site.observe.problems import SENTENCES, WHAT

# Decision rules of the simulation (`rule` ids): a short title and a plain-language explanation.
# English pages show the simulation's own sentence; the explanation here is what other languages
# show, so every rule id the library emits must be listed (tests/browser checks the catalogue).
RULES = {
    "nlc.monitor-pass": (
        _("Node health pass"),
        _(
            "monitorNodeHealth runs every node-monitor-period (5 s): it reads every Node and Lease from its informer "
            "cache, updates each node's probe timestamp, then decides taints and zone states."
        ),
    ),
    "nlc.mark-unknown": (
        _("Mark the node Unknown"),
        _(
            "No new status heartbeat and no newer Lease renewTime were seen for longer than the grace period, so the "
            "controller sets Ready, MemoryPressure, DiskPressure and PIDPressure to Unknown (reason "
            "NodeStatusUnknown). lastHeartbeatTime keeps the kubelet's last post."
        ),
    ),
    "nlc.mark-pods-not-ready": (
        _("Mark the node's pods NotReady"),
        _(
            "Ready went from True to something else in this pass, so every pod bound to the node gets Ready=False "
            "(MarkPodsNotReady). This only happens on the controller's own True to Unknown change: a kubelet that "
            "reports Ready=False does not get its pods marked."
        ),
    ),
    "nlc.enqueue-taint": (
        _("Queue a NoExecute taint"),
        _(
            "Ready was False or Unknown at the start of the pass, so processTaintBaseEviction puts the node in its "
            "zone's rate-limited queue; the tainting loop (every 100 ms) adds the NoExecute taint when the zone's "
            "token bucket allows."
        ),
    ),
    "nlc.taint-no-execute": (
        _("Add the NoExecute taint"),
        _(
            "The zone's token bucket gave a token and the node is still not Ready: the controller adds "
            "not-ready:NoExecute (Ready False) or unreachable:NoExecute (Ready Unknown), following Ready at tainting "
            "time."
        ),
    ),
    "nlc.swap-taint": (
        _("Swap the NoExecute taint"),
        _(
            "Ready moved between False and Unknown while the node already had the other NoExecute taint: the "
            "controller swaps it at once, without the rate limiter (add the new taint, then remove the old one). "
            "Running eviction countdowns are kept."
        ),
    ),
    "nlc.taint-skipped": (
        _("Tainting skipped"),
        _(
            "The queued node is Ready again (or gone) when its turn came: nothing is tainted, but the attempt still "
            "used a token."
        ),
    ),
    "nlc.mark-reachable": (
        _("Node reachable: remove NoExecute taints"),
        _(
            "Ready was True at the start of the pass (or the controller sees the node for the first time): it removes "
            "the not-ready and unreachable NoExecute taints and takes the node out of its zone queue."
        ),
    ),
    "nlc.no-schedule-taints": (
        _("Taint nodes by condition"),
        _(
            "On every Node change the controller matches NoSchedule taints to the conditions: Ready False gives "
            "not-ready, Ready Unknown gives unreachable, pressure conditions give their own taints. Not rate limited."
        ),
    ),
    "nlc.swap-limiter": (
        _("Change the zone's eviction rate"),
        _(
            "The zone changed state: Normal uses node-eviction-rate (0.1 nodes/s), PartialDisruption uses "
            "secondary-node-eviction-rate in zones larger than 50 nodes and 0 otherwise, FullDisruption uses "
            "node-eviction-rate unless every zone is down."
        ),
    ),
    "nlc.enter-master-disruption": (
        _("Every zone is down: stop evicting"),
        _(
            "All zones are in FullDisruption, so the controller assumes its own connectivity is the problem: it "
            "removes every NoExecute taint it added and stops tainting until a node is Ready again."
        ),
    ),
    "nlc.exit-master-disruption": (
        _("A zone is back: resume evicting"),
        _(
            "At least one node is Ready again: every node gets a fresh probe timestamp (a full grace period) and each "
            "zone goes back to the rate of its state."
        ),
    ),
    "tec.process-pod": (
        _("Taint eviction decision for a pod"),
        _(
            "The taint eviction controller looked at the pod's NoExecute taints: for each taint it takes the FIRST "
            "toleration that tolerates it; an untolerated taint deletes the pod now; otherwise the deletion is "
            "scheduled at the smallest tolerationSeconds among those tolerations, counted from when the controller saw "
            "the taint, and the pod stays for ever only if none of them sets tolerationSeconds. A running countdown is "
            "kept."
        ),
    ),
    "scheduler.unschedulable": (
        _("No node fits the pod"),
        _(
            "Every node was filtered out (for example by an untolerated NoSchedule or NoExecute taint, or because it "
            "is cordoned): the pod stays Pending and is retried."
        ),
    ),
    "podgc.orphaned": (
        _("Pod garbage collection"),
        _(
            "The pod is bound to a Node that no longer exists: after a 40 s quarantine the pod garbage collector "
            "force-deletes it."
        ),
    ),
    "cloud.delete-node": (
        _("Cloud instance gone: delete the Node"),
        _(
            "The cloud node lifecycle controller found that the node's instance no longer exists and deletes the Node "
            "object; its Lease and pods follow."
        ),
    ),
    "kubelet.evict-pressure": (
        _("Kubelet evicts under pressure"),
        _(
            "The kubelet's eviction manager saw a resource below its threshold: it evicts pods itself (phase Failed, "
            "reason Evicted). This has nothing to do with taint-based eviction."
        ),
    ),
    "kubelet.shutdown": (
        _("Graceful node shutdown"),
        _(
            "The kubelet received the shutdown signal: it posts Ready=False (node is shutting down) at once and "
            "terminates pods within shutdownGracePeriod."
        ),
    ),
    "statefulset.create-pod": (
        _("StatefulSet creates a pod"),
        _(
            "No object with this ordinal's name exists, so the StatefulSet controller creates the pod, after making "
            "sure its claims from volumeClaimTemplates exist. With OrderedReady it creates one ordinal at a time, "
            "each after the ones before it are Running and Ready."
        ),
    ),
    "statefulset.wait-same-name": (
        _("StatefulSet waits for the name"),
        _(
            "The pod is Terminating but its object still exists. The StatefulSet controller never creates a second "
            "pod with the same name: it waits until the object is gone. On a node whose kubelet is down nobody "
            "finishes the deletion, so it waits for ever unless the pod is force-deleted or Pod GC removes it."
        ),
    ),
    "persistentvolume.bind": (
        _("Claim bound to a volume"),
        _(
            "The first pod that uses the claim is scheduled (WaitForFirstConsumer): the CSI provisioner creates a "
            "PersistentVolume and the PersistentVolume controller binds the claim to it. The claim keeps this volume "
            "wherever its pod runs later."
        ),
    ),
    "podgc.terminating-out-of-service": (
        _("Pod GC force-deletes a pod of an out-of-service node"),
        _(
            "The pod is Terminating on a node that is not Ready and has the node.kubernetes.io/out-of-service taint: "
            "Pod GC marks it Failed and deletes it with grace period 0, without waiting for the kubelet. Its volumes "
            "are then detached at once and a StatefulSet can make the pod again."
        ),
    ),
    "kubelet.volume-mount": (
        _("Kubelet mounts the pod's volumes"),
        _(
            "Every volume of the pod is attached to this node (status.volumesAttached) and mounted, and the node "
            "lists it in status.volumesInUse: the kubelet lets the pod's containers start."
        ),
    ),
    "attachdetach.attach": (
        _("Attach the volume"),
        _(
            "A pod scheduled to the node needs the volume and it is attached nowhere: the attach/detach controller "
            "creates a VolumeAttachment, and the CSI attacher attaches the volume."
        ),
    ),
    "attachdetach.attached": (
        _("Volume attached"),
        _(
            "The CSI attacher reports the volume attached: the controller adds it to the node's "
            "status.volumesAttached, which the kubelet waits for before it mounts the volume."
        ),
    ),
    "attachdetach.multi-attach": (
        _("Multi-Attach error"),
        _(
            "The volume is ReadWriteOnce and still attached to another node: the controller cannot attach it here "
            "until it is detached there. The waiting pod gets a FailedAttachVolume event and stays in "
            "ContainerCreating."
        ),
    ),
    "attachdetach.wait-unmount": (
        _("Wait for the kubelet to unmount"),
        _(
            "No pod on the node needs the volume any more, but the node still lists it in status.volumesInUse "
            "(mounted), so the controller does not detach it. If the node is not Ready, it detaches anyway once "
            "maxWaitForUnmountDuration (6 min) has passed since it first wanted to."
        ),
    ),
    "attachdetach.detach": (
        _("Detach the volume"),
        _(
            "No pod on the node needs the volume and the kubelet no longer lists it in volumesInUse: a safe detach. "
            "The controller first removes it from the node's volumesAttached, then deletes the VolumeAttachment."
        ),
    ),
    "attachdetach.force-detach-timeout": (
        _("Force detach after the timeout"),
        _(
            "The node is not Ready and still lists the volume in use, and maxWaitForUnmountDuration (6 min) has "
            "passed since the detach was first wanted: the controller detaches it anyway. This is unsafe if the node "
            "is in fact still running and writing."
        ),
    ),
    "attachdetach.force-detach-out-of-service": (
        _("Detach at once: out-of-service taint"),
        _(
            "The node has the node.kubernetes.io/out-of-service taint: the controller detaches without waiting for "
            "the kubelet to unmount (NodeOutOfServiceVolumeDetach). Whoever added the taint vouches that the node is "
            "really down."
        ),
    ),
}

ACTIONS = {
    "stop-kubelet": _("Stop kubelet"),
    "start-kubelet": _("Start kubelet"),
    "stop-runtime": _("Stop container runtime"),
    "start-runtime": _("Start container runtime"),
    "partition": _("Cut off from the API server"),
    "heal": _("Heal the partition"),
    "start-pressure": _("Start resource pressure"),
    "stop-pressure": _("Stop resource pressure"),
    "fail-lease-writes": _("Fail Lease writes"),
    "restore-lease-writes": _("Restore Lease writes"),
    "fail-status-writes": _("Fail status writes"),
    "restore-status-writes": _("Restore status writes"),
    "slow-apiserver": _("Slow down the API server"),
    "restore-apiserver": _("Restore the API server"),
    "shutdown": _("Graceful shutdown"),
    "power-off": _("Power off"),
    "power-on": _("Power on"),
    "cordon": _("Cordon"),
    "uncordon": _("Uncordon"),
    "create-node": _("Create a node"),
    "delete-node": _("Delete the node (instance terminated)"),
    "zone-outage": _("Zone outage"),
    "zone-heal": _("Heal the zone"),
    "restart-controller-manager": _("Restart kube-controller-manager"),
    "taint-out-of-service": _("Taint out-of-service"),
    "untaint-out-of-service": _("Remove the out-of-service taint"),
    "force-delete-pod": _("Force-delete the pod"),
}

FAULT_FLAGS = {
    "stop-kubelet": _("kubelet stopped"),
    "stop-runtime": _("runtime down"),
    "partition": _("partitioned"),
    "start-pressure": _("{resource} pressure"),
    "fail-lease-writes": _("Lease writes fail"),
    "fail-status-writes": _("status writes fail"),
    "slow-apiserver": _("slow API server"),
    "power-off": _("powered off"),
    "shutdown": _("shutting down"),
    "cordon": _("cordoned"),
    "zone-outage": _("zone outage"),
    "taint-out-of-service": _("out of service"),
}

TRANSITIONS = {
    "node-ready": _("{node}: Ready {from} → {to}"),
    "node-condition": _("{node}: {key} {from} → {to}"),
    "taint-added": _("{node}: taint {key}:{effect} added"),
    "taint-removed": _("{node}: taint {key}:{effect} removed"),
    "pod-ready": _("Pod {pod}: Ready {from} → {to}"),
    "pod-phase": _("Pod {pod}: phase {from} → {to}"),
    "pod-terminating": _("Pod {pod} is Terminating"),
    "pod-deleted": _("Pod {pod} deleted"),
    "pod-created": _("Pod {pod} created"),
    "pod-scheduled": _("Pod {pod} scheduled to {to}"),
    "endpoint": _("Endpoint of pod {pod}: {to}"),
    "zone-state": _("Zone {key}: {from} → {to}"),
    "node-created": _("Node {node} created"),
    "node-deleted": _("Node {node} deleted"),
}

LANES = {
    "trainer": _("trainer (kubectl)"),
    "other-kubelets": _("other nodes' kubelets"),
    "kubelet-lease": _("{node} kubelet\nlease controller"),
    "kubelet-status": _("{node} kubelet\nsyncNodeStatus"),
    "kube-apiserver": _("kube-apiserver"),
    "node-lifecycle-controller": _("node lifecycle controller"),
    "taint-eviction-controller": _("taint eviction controller"),
    "kube-scheduler": _("kube-scheduler"),
    "endpointslice-controller": _("EndpointSlice controller"),
    "workload-controllers": _("ReplicaSet, DaemonSet, PodGC"),
    "workload-controllers-without-podgc": _("ReplicaSet, DaemonSet controllers"),
    "statefulset-controller": _("StatefulSet controller"),
    "volume-controllers": _("attach/detach controller,\nPV binder"),
    "pod-garbage-collector": _("Pod garbage collector"),
    "stateful-controllers": _("StatefulSet, attach/detach, PodGC"),
}

# Shorter lane names, shown where the full one does not fit in two lines (a laptop); the
# label's tooltip keeps the full name.
LANES_SHORT = {
    "workload-controllers": _("ReplicaSet, DS, PodGC"),
    "workload-controllers-without-podgc": _("ReplicaSet, DS"),
    "volume-controllers": _("attach/detach"),
    "pod-garbage-collector": _("PodGC"),
    "stateful-controllers": _("STS, PVs,\nPodGC"),
}

# Which branch of tryUpdateNodeHealth refreshed (or did not refresh) the probe timestamp.
BRANCHES = {
    "lease-renewed": _("newer Lease renewTime, probe refreshed"),
    "status-posted": _("new status heartbeat, probe refreshed"),
    "status-posted+lease": _("new status and Lease, probe refreshed"),
    "no-news": _("nothing new"),
    "first-seen": _("first sight, probe starts now"),
    "ready-appeared": _("Ready appeared, probe starts now"),
    "ready-vanished": _("Ready vanished"),
    "no-ready-condition": _("no Ready condition yet (startup grace)"),
    "mark-unknown": _("grace period over, marked Unknown"),
}

TEXTS = {
    "seq.deadline": _("Unknown after {t}"),
    "clock.viewers": _("{n} watching"),
    "clock.paused": _("paused"),
    "clock.running": _("running"),
    "seq.zone-traffic": _(
        "{zone}: {kubelets} kubelets · {leases} Lease PUTs · {status} status writes · {failed} failed, last 10 s"
    ),
    "clock.preparing": _("starting the cluster up (T+{t} s)…"),
    "clock.limited": _("{speed}× (not {asked}×: too large for this server)"),
    "conn.connecting": _("connecting…"),
    "conn.live": _("live"),
    "conn.reconnecting": _("reconnecting…"),
    "conn.resynced": _("resynced"),
    "conn.gone": _("run not available"),
    "run-status.running": _("running"),
    "run-status.paused": _("paused"),
    "run-status.finished": _("finished"),
    "run-status.stopped": _("stopped"),
    "run-status.pending": _("starting"),
    "run-status.failed": _("failed"),
    "run-ended": _("Ended: {reason}"),
    "run-ended.stopped": _("stopped by the trainer"),
    "run-ended.duration": _("the scenario's time is over"),
    "run-ended.idle": _("nobody watched or commanded it for a while"),
    "run-ended.failed": _("the simulation failed ({reason})"),
    "run-ended.observation-failed": _("watching the cluster failed: {reason}"),
    # an observation's bar (js/run-page.js): its watch failing, said in the server's words (docs/observe.md)
    "observed.problem": _("Watching the cluster fails, retrying: {message}"),
    "observed.watching-again": _("Watching the cluster again"),
    # what failed, by kind, and the resources' names in those sentences (heartbeat_site/observe/problems.py)
    **{f"observed.why.{kind}": _(text) for kind, text in SENTENCES.items() if kind != "other"},
    **{f"observed.what.{resource}": _(text) for resource, text in WHAT.items()},
    "run.end-confirm": _("End the run for everyone? Viewers see that it ended; it cannot be resumed."),
    "toast.sent": _("{action}: applies at T+{at}"),
    # the comparison page (js/compare-page.js): its strip of differences
    "compare.sent": _("{action}: applies to both sides at T+{at}"),
    "compare.seconds": _("{t} s"),
    "compare.not-yet": _("not yet"),
    "compare.never": _("never"),
    "compare.delta": _("({d} s)"),
    "compare.fault": _("fault: {action} {node}"),
    "compare.node-created": _("{node} created"),
    "compare.node-deleted": _("{node} deleted"),
    "compare.pods-not-ready": _("{node}: its pods NotReady"),
    "compare.pods-terminating": _("{node}: its pods evicted (Terminating)"),
    "toast.refused": _("Refused ({status}): {message}"),
    "share.copied": _("Viewer link copied"),
    "cluster.no-zone": _("(no zone label)"),
    "cluster.rate": _("eviction rate {rate}/s"),
    "cluster.tokens": _("tokens {tokens}"),
    "cluster.queue": _("queue: {nodes}"),
    "cluster.queue-length": _("queue: {n} nodes"),
    "cluster.pending": _("Pods waiting for a node"),
    "cluster.no-lease": _("no Lease yet"),
    "cluster.lease-age": _("Lease renewed {age} s ago (grace {grace} s)"),
    "cluster.lease-age-short": _("{age} s"),
    "cluster.zone-ready": _("{ready}/{total} Ready"),
    "cluster.no-status": _("no status posted yet"),
    "cluster.status-post": _("last status post {age} ago"),
    "cluster.evicts-in": _("evicted in {left}"),
    "cluster.volumes": _("Volumes"),
    "cluster.force-detach-in": _("force detach in {left}"),
    "volume-state.attached": _("attached"),
    "volume-state.attaching": _("attaching"),
    "volume-state.in-use": _("in use"),
    "volume-state.in-use-stale": _("in use, as its kubelet last posted"),
    "volume-state.detaching": _("detaching"),
    "pod-state.ContainerCreating": _("ContainerCreating"),
    "pod-why.unconfirmed": _("Terminating: its kubelet on {node} cannot confirm"),
    "pod-why.unconfirmed-sts": _(
        "Terminating: its kubelet on {node} cannot confirm, and the StatefulSet makes no new pod of this name until "
        "the object is gone"
    ),
    "pod-why.volume-elsewhere": _("ContainerCreating: waiting for its volume {claim}, attached to {node}"),
    "pod-why.attaching": _("waiting for its volume {claim} to be attached"),
    "pod-why.mounting": _("volume {claim} attached: the kubelet mounts it"),
    "pod-why.claim-pending": _("waiting for its claim {claim} to be bound"),
    "overview.zone-cells": _("nodes of {zone}"),
    "overview.taints": _("taints {taints}"),
    "overview.no-taints": _("no taints"),
    "overview.legend-lease": _("bar: Lease age / grace period"),
    "overview.pending": _("{n} pods waiting for a node"),
    "zone-state.Initial": _("Initial"),
    "zone-state.Normal": _("Normal"),
    "zone-state.PartialDisruption": _("PartialDisruption"),
    "zone-state.FullDisruption": _("FullDisruption"),
    "pod-state.Ready": _("Ready"),
    "pod-state.NotReady": _("NotReady"),
    "pod-state.Terminating": _("Terminating"),
    "pod-state.Pending": _("Pending"),
    "pod-state.Succeeded": _("Succeeded"),
    "pod-state.Failed": _("Failed"),
    "pod-state.Unknown": _("Unknown"),
    "timeline.fault": _("faults"),
    "timeline.node": _("nodes"),
    "timeline.taint": _("taints"),
    "timeline.pod": _("pods"),
    "timeline.zone": _("zones"),
    "arch.kubelet": _("kubelet"),
    "arch.lease-ctl": _("node lease controller"),
    "arch.status-ctl": _("syncNodeStatus"),
    "arch.apiserver": _("kube-apiserver"),
    "arch.obj-lease": _("Lease (kube-node-lease)"),
    "arch.obj-node": _("Node .status"),
    "arch.obj-pods": _("Pods, EndpointSlices"),
    "arch.nlc": _("node lifecycle controller"),
    "arch.tec": _("taint eviction controller"),
    "arch.sched": _("kube-scheduler"),
    "arch.eps": _("EndpointSlice controller"),
    "arch.rs": _("ReplicaSet controller"),
    "arch.e-lease": _("PUT every 10 s"),
    "arch.e-status": _("PATCH on change / 5 min"),
    "arch.e-watch": _("watch"),
    "arch.e-nlc-write": _("Unknown, taints"),
    "arch.e-tec-write": _("DELETE pods"),
    "arch.e-rs": _("new pods"),
    "arch.renewed-ago": _("renewed {age} s ago"),
    "arch.pods": _("{n} pods on the node"),
    "arch.grace": _("grace period {grace} s"),
    "health.pass": _("monitorNodeHealth pass, every 5 s"),
    "health.q-signal": _("New status heartbeat, or a newer Lease renewTime?"),
    "health.probe": _("probeTimestamp := now"),
    "health.q-grace": _("now > probeTimestamp + grace period?"),
    "health.unknown": _("Ready and pressure conditions := Unknown"),
    "health.keep": _("keep what the kubelet posted"),
    "health.q-observed": _("Ready at the start of the pass?"),
    "health.untaint": _("remove NoExecute taints, leave the queue"),
    "health.enq-nr": _("queue not-ready:NoExecute"),
    "health.enq-ur": _("queue unreachable:NoExecute"),
    "health.mark-pods": _("now not True: MarkPodsNotReady"),
    "health.zones": _("zone states and rate limiters, then the 100 ms tainting loop"),
    "health.yes": _("yes"),
    "health.no": _("no"),
    "health.true": _("True"),
    "health.false": _("False"),
    "health.unknown-branch": _("Unknown"),
    "health.now-not-true": _("now ≠ True"),
    "eviction.pick": _("Pick a pod on the cluster view to see the taint eviction controller's decision."),
    "eviction.q-taints": _("NoExecute taints on the pod's node"),
    "eviction.no-taints": _("none: nothing to decide"),
    "eviction.q-toleration": _("For each taint, the FIRST toleration (in spec order) that tolerates it"),
    "eviction.now": _("a taint is not tolerated: delete now"),
    "eviction.never": _("no tolerationSeconds: never evicted"),
    "eviction.after": _(
        "delete after the smallest tolerationSeconds ({seconds} s), counted from when the controller saw the taint"
    ),
    "eviction.estimated": _("estimated from the taint's timeAdded"),
    "eviction.terminating": _(
        "Deleted: the pod stays Terminating until its kubelet confirms (or the node object goes)."
    ),
    "eviction.note": _(
        "A taint swap between not-ready and unreachable keeps the countdown; removing the taints cancels it."
    ),
    "volume.loop": _("attach/detach reconciler, every 100 ms"),
    "volume.q-needed": _("Does a pod object on the old node still use the volume? (a Terminating one counts)"),
    "volume.stuck": _("It stays attached: only the pod object's removal (force delete, Pod GC) frees it"),
    "volume.no-deleted": _("no: the pod object is gone"),
    "volume.q-inuse": _("Does that node still list it in status.volumesInUse?"),
    "volume.detach": _("detach: the kubelet unmounted it"),
    "volume.q-oos": _("out-of-service taint on the node?"),
    "volume.detach-now": _("detach at once, without the unmount"),
    "volume.q-timeout": _("maxWaitForUnmountDuration (6 min) over, and the node not Ready?"),
    "volume.force": _("force detach"),
    "volume.wait": _("wait, and ask again next loop"),
    "volume.multi-attach": _("Meanwhile the new pod: Multi-Attach error, ContainerCreating"),
    "volume.attach": _("attach to the new pod's node: VolumeAttachment, then the kubelet mounts it"),
    "volume.pick": _("Pick a pod with a volume (a StatefulSet's) on the cluster view to see where its volume is."),
    "volume.head": _("{pod} · claim {claim} → {pv} · pod on {node}"),
    "volume.head-old": _("{pod} · claim {claim} → {pv} · pod on {node} · still attached to {old}"),
    "volume.chip-title": _(
        "From the Node's status: volumesAttached (written by the attach/detach controller) and volumesInUse "
        "(written by the node's kubelet, which lists a volume as soon as a pod there needs it)"
    ),
    "volume.force-in": _("force detach from {node} in {left}"),
    "volume.note": _(
        "A ReadWriteOnce volume is attached to one node at a time. Force-deleting the pod starts the 6 min wait; "
        "the out-of-service taint (on a node really down) lets Pod GC delete the pod and the volume go at once."
    ),
    "why.write": _("Write request"),
    "why.read": _("Read request"),
    "why.as": _("as"),
    "why.request-failed": _("{request} never reached the API server (timeout)."),
    "why.watch": _("The API server delivered the change of {object} to the informers watching it."),
    "why.fault": _("The trainer applied: {action} {target}"),
    "why.inputs": _("Inputs"),
    "why.outcome": _("Outcome:"),
    "why.source": _("Source:"),
    "why.because": _("Because of this decision"),
    "why.kubelet.kubelet-lease": _(
        "The kubelet's node lease controller renews its Lease every 10 s (a quarter of leaseDurationSeconds, with up "
        "to 4 % jitter). This renewal is the node's liveness heartbeat."
    ),
    "why.kubelet.kubelet-status": _(
        "syncNodeStatus computes the node status every 10 s and sends it only when something changed or 5 minutes "
        "passed since the last report."
    ),
    "why.kubelet.kubelet": _("The kubelet reports the status of its pods."),
    "faults.scope-node": _("Node"),
    "faults.scope-zone": _("Zone"),
    "faults.scope-cluster": _("Cluster"),
    "faults.scope-pod": _("Pod"),
    "faults.pick-pod": _("Pick a pod on the cluster view first"),
    "faults.resource": _("resource"),
    "faults.for": _("undo after"),
    "faults.latency": _("latency"),
    "lesson.lesson": _("Lesson {n}"),
    "lesson.drill": _("Drill"),
    "lesson.step-of": _("Step {n} of {of}"),
    "lesson.show-question": _("Show the question"),
    "lesson.show-diagnosis": _("Show the diagnosis"),
    "lesson.show-answer": _("Show the answer"),
    "lesson.reveal": _("Reveal the answer"),
    "lesson.next": _("Next step"),
    "lesson.close": _("Close"),
    "lesson.hide": _("Hide"),
    "lesson.question": _("Question"),
    "lesson.question-of": _("Question {n} of {of}"),
    "lesson.diagnosis": _("Your diagnosis"),
    "lesson.diagnosis-ask": _("Which node, and what broke?"),
    "lesson.what-broke": _("What broke?"),
    "lesson.which-node": _("On which node?"),
    "lesson.your-number": _("Your answer, a number"),
    "lesson.send": _("Send"),
    "lesson.need-number": _("Type a number first."),
    "lesson.need-node": _("Now pick the node."),
    "lesson.need-cause": _("Now pick what broke."),
    "lesson.sending": _("Sending…"),
    "lesson.saved": _("Answer saved. You can change it until the reveal."),
    "lesson.offline": _("Not connected: your answer was not sent. Try again in a moment."),
    "lesson.error.question-closed": _("Answers are closed: the trainer has revealed this question."),
    "lesson.error.unknown-question": _("This question is not open in this run."),
    "lesson.error.bad-answer": _("This answer was not accepted."),
    "lesson.error.no-question": _("This run asks no questions."),
    "lesson.nickname": _("Your name (optional)"),
    "lesson.save-name": _("Save"),
    "lesson.answering-as": _("Answering as"),
    "lesson.hidden-until-reveal": _("The class's answers appear when the trainer reveals the answer."),
    "lesson.answered": _("{n} answered"),
    "lesson.no-answers": _("No answers yet."),
    "lesson.correct": _("Right answer:"),
    "lesson.tolerance": _("(anything within ± {tolerance} counts)"),
    "lesson.on-node": _("on"),
    "lesson.you-right": _("You got it:"),
    "lesson.you-wrong": _("Not quite, you said:"),
    "lesson.yours": _("your answer"),
    "lesson.why": _("Why?"),
    "lesson.order-hint": _("Tap the events in the order they happen: first tap is 1. Tap again to take one out."),
    "lesson.order-list": _("Events to put in order"),
    "lesson.order-clear": _("Start again"),
    "lesson.order-send": _("Send this order"),
    "lesson.order-need": _("Tap every event first: {n} left."),
    "lesson.order-to-come": _("still to come"),
    "lesson.order-placed": _("{item}: placed {n} of {of}"),
    "lesson.order-removed": _("{item}: taken out; the events after it moved up one place"),
    "lesson.order-cleared": _("Every event taken out: start again from 1."),
    "lesson.order-not-shown": _("The run has not shown this order yet: it will show it as the events happen."),
    "lesson.you-pending": _("Your order, checked once the run has shown its own:"),
    "lesson.order-event": _("Event"),
    "lesson.order-tally": _("How many put each event at each place"),
    "lesson.order-whole": _("{n} of {of} got the whole order ({percent}%)"),
    "lesson.evidence": _("Evidence:"),
    "lesson.fault": _("Fault: {action} on {target}"),
    "lesson.evidence-waiting": _("Evidence: the run will show it when"),
    "lesson.forwarding": _("Fast-forwarding to step {n}: the run goes fast until its moment comes."),
    "lesson.forward-missed": _("The run ended before the moment of step {n} came."),
    "lesson.check": _("Check my answer"),
    "lesson.saved-solo": _("Answer saved. Check it when you are ready; until then you can change it."),
    "lesson.you-none": _("You did not answer this one."),
    "lesson.finished": _("Lesson finished: {score} of {of} right."),
    "lesson.finished-drill": _("Drill finished: {score} of {of} right."),
    "lesson.back-home": _("Back to the lesson path"),
    "lesson.report": _("Session report"),
    "lesson.report-loading": _("Loading the session report…"),
    "lesson.report-failed": _("Could not load the session report: {message}"),
    "lesson.report-none": _("No question has been asked yet."),
    "lesson.report-answers": _("Answers"),
    "lesson.report-right": _("Right"),
    "lesson.report-right-of": _("{right} of {answers} right"),
    "lesson.report-open": _("(not revealed)"),
    "lesson.report-viewers": _("Who answered"),
    "lesson.report-viewer": _("Viewer"),
    "lesson.report-anonymous": _("anonymous {n}"),
    "lesson.report-csv": _("Download CSV"),
    "lesson.report-json": _("Download JSON"),
    "action.reveal": _("Reveal the answer"),
    "action.next": _("Next step"),
    "home.starting": _("Starting…"),
    "home.failed": _("Could not start the run: {message}"),
    "home.finished": _("Finished alone · best: {score} of {of} right"),
}


def action_names() -> dict[str, str]:
    return {k: str(v) for k, v in ACTIONS.items()}


def ui_strings() -> dict[str, str]:
    """The page's strings in the active language, keyed as the scripts look them up."""
    strings = {k: str(v) for k, v in TEXTS.items()}
    strings.update({f"action.{k}": str(v) for k, v in ACTIONS.items()})
    strings.update({f"fault-flag.{k}": str(v) for k, v in FAULT_FLAGS.items()})
    strings.update({f"transition.{k}": str(v) for k, v in TRANSITIONS.items()})
    strings.update({f"lane.{k}": str(v) for k, v in LANES.items()})
    strings.update({f"lane-short.{k}": str(v) for k, v in LANES_SHORT.items()})
    strings.update({f"branch.{k}": str(v) for k, v in BRANCHES.items()})
    for rule, (title, explain) in RULES.items():
        strings[f"rule.{rule}"] = str(title)
        strings[f"rule-explain.{rule}"] = str(explain)
    return strings
