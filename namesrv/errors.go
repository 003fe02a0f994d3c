package namesrv

import "errors"

var (
	// ErrTopicNotExist: no route (queue data with a live broker) for the topic.
	ErrTopicNotExist = errors.New("namesrv: topic not exist")
	// ErrKVNotFound: the KV namespace or key is absent.
	ErrKVNotFound = errors.New("namesrv: kv config not found")
	// ErrRegisterRejected: Apache's "register broker failed" — a single-topic
	// registration from a broker id that has not registered fully yet.
	ErrRegisterRejected = errors.New("namesrv: register broker failed")
	// ErrBadBody: a request body that does not decode.
	ErrBadBody = errors.New("namesrv: bad request body")
	// ErrDisabled: the request is turned off by config (Apache's remark "disable").
	ErrDisabled = errors.New("namesrv: disable")
)
