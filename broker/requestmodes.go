package broker

// AllMessageRequestModes is GET_ALL_MESSAGE_REQUEST_MODE's body, which a
// 5.x slave asks its master for: Apache's MessageRequestModeManager.encode.
func (b *Broker) AllMessageRequestModes() []byte {
	out, err := b.requestModes.Marshal()
	if err != nil { // maps of strings and ints: cannot fail
		return []byte(`{"messageRequestModeMap":{}}`)
	}
	return out
}
