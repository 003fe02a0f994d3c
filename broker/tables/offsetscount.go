package tables

// Len is the number of (topic, group) keys of the offset table
// (GET_BROKER_LITE_INFO's offsetTableSize).
func (o *Offsets) Len() int {
	o.mu.RLock()
	defer o.mu.RUnlock()
	return len(o.table) + len(o.lmq)
}
