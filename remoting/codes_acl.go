package remoting

// ACL 1.0 request codes (RequestCode, 4.9.8/5.3.1) and the static-topic
// code ACL 1.0 counts as admin; see package acl.
const (
	UpdateAndCreateACLConfig     int32 = 50
	DeleteACLConfig              int32 = 51
	GetBrokerClusterACLInfo      int32 = 52
	UpdateGlobalWhiteAddrsConfig int32 = 53
	GetBrokerClusterACLConfig    int32 = 54
	UpdateAndCreateStaticTopic   int32 = 513
)
