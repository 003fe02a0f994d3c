package compattest

import "testing"

// TestNodeSDK: the official Node.js SDK, rocketmq-client-nodejs 1.0.8
// (nodejs/package.json and package-lock.json, installed by make sdk-deps
// with npm ci), through the gRPC proxy in cluster and local mode, plaintext
// and TLS: the scenarios of TestPythonSDK (sdk_harness_test.go).
func TestNodeSDK(t *testing.T) {
	t.Parallel() // its own clusters and ports; waits far more than it computes
	runSDK(t, sdkLang{
		name: "nodejs",
		what: "Node.js SDK rocketmq-client-nodejs 1.0.8",
		dir:  "nodejs",
		argv: []string{"node", "sdk_scenarios.js"},
		need: "node_modules/.package-lock.json",
		log:  "logs/rocketmq_client_nodejs.log",
	})
}
