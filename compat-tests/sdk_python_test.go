package compattest

import "testing"

// TestPythonSDK: the official Python SDK, rocketmq-python-client 5.1.2
// (python/requirements.txt, installed into python/.venv by make sdk-deps),
// through the gRPC proxy in cluster and local mode, plaintext and TLS:
// normal (SimpleConsumer: body, tag, keys, user properties, message id),
// FIFO (send order; a blocked message group is not overtaken), delay,
// transaction (commit, rollback, an orphan committed by the
// TransactionChecker) and PushConsumer. See sdk_harness_test.go.
func TestPythonSDK(t *testing.T) {
	t.Parallel() // its own clusters and ports; waits far more than it computes
	runSDK(t, sdkLang{
		name: "python",
		what: "Python SDK rocketmq-python-client 5.1.2",
		dir:  "python",
		argv: []string{".venv/bin/python", "sdk_scenarios.py"},
		need: ".venv/installed-requirements.txt",
		log:  "logs/rocketmq_python/rocketmq_client.log",
	})
}
