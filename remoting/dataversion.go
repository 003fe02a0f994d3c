package remoting

import "time"

// DataVersion is Apache's DataVersion: bumped on every change of a table.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

// Next records a change.
func (v *DataVersion) Next() {
	v.Counter++
	v.Timestamp = time.Now().UnixMilli()
}
