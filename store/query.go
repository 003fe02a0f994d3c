package store

// QueryResult is the outcome of QueryMessage.
type QueryResult struct {
	// Body is dst with the records appended, exactly as stored.
	Body  []byte
	Count int
	// IndexLastUpdateTimestamp and IndexLastUpdatePhyoffset are the newest
	// index file's end values (0 when nothing matched), for the response
	// header of QUERY_MESSAGE.
	IndexLastUpdateTimestamp int64
	IndexLastUpdatePhyoffset int64
}

// QueryMessage returns the records indexed under topic#key (a KEYS token or
// the UNIQ_KEY) stored within [begin, end] ms, at most
// min(maxNum, MaxMsgsNumBatch), appended to dst in commit log order
// (DefaultMessageStore.queryMessage). Matching is by key hash only, as in
// Apache: callers filter by key.
func (s *Store) QueryMessage(dst []byte, topic, key string, maxNum int, begin, end int64) QueryResult {
	res := QueryResult{Body: dst}
	if s.idx == nil || maxNum <= 0 {
		return res
	}
	maxNum = min(maxNum, s.cfg.MaxMsgsNumBatch)
	last := end
	for range 3 {
		offs, ts, phy := s.idx.query(topic, key, maxNum, begin, last)
		if len(offs) == 0 {
			break
		}
		res.IndexLastUpdateTimestamp, res.IndexLastUpdatePhyoffset = ts, phy
		for i, off := range offs {
			rec, err := s.MessageAt(off)
			if err != nil {
				continue // cleaned up, or an entry past a truncated tail
			}
			if i == 0 {
				if t, ok := s.cl.recordStoreTimestamp(off); ok {
					last = t
				}
			}
			res.Body = append(res.Body, rec...)
			res.Count++
		}
		if res.Count > 0 || last < begin {
			break
		}
	}
	return res
}
