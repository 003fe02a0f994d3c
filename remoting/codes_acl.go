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

// ACL 2.0's admin request codes (RequestCode.AUTH_*, 5.3+): users and
// policies, kept by the brokers.
const (
	AuthCreateUser int32 = 3001
	AuthUpdateUser int32 = 3002
	AuthDeleteUser int32 = 3003
	AuthGetUser    int32 = 3004
	AuthListUser   int32 = 3005
	AuthCreateACL  int32 = 3006
	AuthUpdateACL  int32 = 3007
	AuthDeleteACL  int32 = 3008
	AuthGetACL     int32 = 3009
	AuthListACL    int32 = 3010
)
