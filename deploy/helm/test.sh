#!/bin/sh
# test.sh HELM VALIDATE is make test-helm: no cluster needed. For the chart
# in rocketmq/ and each values file in rocketmq/ci/:
#   helm lint --strict   (the templates render; values.schema.json holds:
#                         types, ranges, enums, required keys)
#   helm template        piped into VALIDATE (validate/main.go: every
#                         manifest decoded strictly into its Kubernetes Go
#                         type, names and labels valid, references inside
#                         the release resolved)
# then what the chart promises, read from the rendered manifests (brokerIP1
# from the pod's address, the preStop drain, the ServiceMonitor), and values
# the schema must refuse.
set -eu
helm=$1
validate=$2
here=$(cd "$(dirname "$0")" && pwd)
chart=$here/rocketmq
out=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-helm.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "test-helm: FAIL: $*" >&2; exit 1; }

for f in "$chart"/ci/*.yaml; do
	c=$(basename "$f" .yaml)
	"$helm" lint --strict "$chart" -f "$f" >"$out/$c.lint" 2>&1 || { cat "$out/$c.lint" >&2; fail "helm lint $c"; }
	"$helm" template rmq "$chart" --namespace mq -f "$f" >"$out/$c.yaml" 2>"$out/$c.err" || { cat "$out/$c.err" >&2; fail "helm template $c"; }
	printf 'test-helm: %-18s lint ok, ' "$c"
	"$validate" -min-docs 8 <"$out/$c.yaml" || fail "validate $c"
done

# has CASE TEXT WHAT: the rendered CASE contains TEXT.
has() { grep -qF -- "$2" "$out/$1.yaml" || fail "$1: $3 (no '$2' in the rendered manifests)"; }
has default-values 'echo "brokerIP1=$POD_IP"' "brokerIP1 from the pod's address"
has default-values 'fieldPath: status.podIP' "POD_IP from the downward API"
has default-values 'value: "rmq-nameserver:9876"' "NAMESRV_ADDR for mqadmin in the probes and preStop"
has default-values 'command: ["./mqbroker-drain", "60"]' "the preStop drain"
has default-values 'terminationGracePeriodSeconds: 100' "grace period = drain + shutdown + 10"
has default-values 'metricsPromExporterPort=5557' "the metrics port in broker.conf"
has default-values 'kind: Deployment' "name servers as a Deployment"
has controller-values 'kind: ServiceMonitor' "the ServiceMonitor"
has controller-values 'enableControllerMode=true' "controller mode brokers"
has controller-values 'controllerAddr=rmq-controller-0.rmq-controller.mq.svc:9878;rmq-controller-1.rmq-controller.mq.svc:9878;rmq-controller-2.rmq-controller.mq.svc:9878' "controllerAddr of the three controllers"
has controller-values 'controllerRaftPortOffset=10' "the raft port as Apache's internalport"
has controller-values 'name: rmq-broker-1' "the second broker group's StatefulSet"
has controller-values 'volumeClaimTemplates:' "brokers' volumes"
has apache-values 'brokerClusterName=MyCluster' "Apache's conf.clusterNameOverride"
[ "$(grep -c '^kind: StatefulSet' "$out/controller-values.yaml")" = 3 ] || fail "controller-values: want 3 StatefulSets (2 broker groups, the controllers)"

# The schema refuses what it must.
for bad in broker.replicaCount=0 broker.service.port=notaport nameserver.image.pullPolicy=Sometimes \
	broker.persistence.size=lots broker.drain.timeoutSeconds=-1; do
	if "$helm" lint --strict "$chart" --set "$bad" >"$out/bad.lint" 2>&1; then
		fail "helm lint accepted --set $bad"
	fi
done
echo "test-helm: schema refuses 5 bad values: ok"
echo "test-helm: PASS"
