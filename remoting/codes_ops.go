package remoting

// Operators' request codes of Apache 5.3.3: processor/opsadmin.go and the
// name server's config handlers.
// 2001-2004 as request codes; the same numbers are controller response
// codes (codes_controller.go).
const (
	UpdateNamesrvConfig         int32 = 318
	GetNamesrvConfig            int32 = 319
	ResumeCheckHalfMessage      int32 = 323
	UpdateAndGetGroupForbidden  int32 = 353
	RecallMessage               int32 = 370
	ResetMasterFlushOffset      int32 = 908
	UpdateColdDataFlowCtrConfig int32 = 2001
	RemoveColdDataFlowCtrConfig int32 = 2002
	GetColdDataFlowCtrInfo      int32 = 2003
	SetCommitLogReadMode        int32 = 2004
)

// Operators' request codes of Apache 5.5 that a rocketgo broker does not
// serve (it answers REQUEST_CODE_NOT_SUPPORTED): mqadmin sends them for
// RocksDB stores, broker containers and the timer engine switch.
const (
	CheckRocksdbCqWriteProgress int32 = 354
	ExportRocksDBConfigToJSON   int32 = 355
	AddBroker                   int32 = 902
	RemoveBroker                int32 = 903
	SwitchTimerEngine           int32 = 5001
)
