package message

// SYSFLAG bits (MessageSysFlag, identical in 4.9.8 and 5.3.3).
const (
	FlagCompressed    int32 = 0x1
	FlagMultiTags     int32 = 0x2
	TransactionMask   int32 = 0xC
	TransactionNot    int32 = 0x0
	TransactionPrep   int32 = 0x4
	TransactionCommit int32 = 0x8
	TransactionRollbk int32 = 0xC
	FlagBornHostV6    int32 = 0x10
	FlagStoreHostV6   int32 = 0x20
	FlagNeedUnwrap    int32 = 0x40
	FlagInnerBatch    int32 = 0x80
	CompressionMask   int32 = 0x700
	CompressionLZ4    int32 = 0x100
	CompressionZSTD   int32 = 0x200
	CompressionZLIB   int32 = 0x300
)

// TransactionType returns sysFlag's transaction bits (TransactionNot,
// TransactionPrep, TransactionCommit or TransactionRollbk).
func TransactionType(sysFlag int32) int32 { return sysFlag & TransactionMask }

// Magic codes (MessageDecoder / CommitLog), as the signed ints stored on disk.
const (
	// MagicV1: record with a 1-byte topic length.
	MagicV1 int32 = -626843481 // 0xDAA320A7
	// MagicV2: record with a 2-byte topic length (5.x, topics > 127 bytes).
	MagicV2 int32 = -626843477 // 0xDAA320AB
	// MagicBlank: end-of-file filler record (TOTALSIZE + MAGIC only).
	MagicBlank int32 = -875286124 // 0xCBD43194
)

// Limits.
const (
	// MaxPropertiesLen: properties length is a signed short.
	MaxPropertiesLen = 32767
	// MaxTopicLenV1: longest topic written with MagicV1.
	MaxTopicLenV1 = 127
	// MaxTopicLenV2: longest topic a V2 record can carry.
	MaxTopicLenV2 = 32767
	// BlankRecordSize: bytes of the BLANK record actually written.
	BlankRecordSize = 8
)
