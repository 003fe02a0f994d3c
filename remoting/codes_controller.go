package remoting

// Controller request codes (Apache RequestCode, 5.x controller mode) and the
// CONTROLLER_* response codes (ResponseCode); see package controller.
const (
	BrokerHeartbeat              int32 = 904
	ControllerAlterSyncStateSet  int32 = 1001
	ControllerElectMaster        int32 = 1002
	ControllerRegisterBroker     int32 = 1003
	ControllerGetReplicaInfo     int32 = 1004
	ControllerGetMetadataInfo    int32 = 1005
	ControllerGetSyncStateData   int32 = 1006
	GetBrokerEpochCache          int32 = 1007
	NotifyBrokerRoleChanged      int32 = 1008
	UpdateControllerConfig       int32 = 1009
	GetControllerConfig          int32 = 1010
	CleanBrokerData              int32 = 1011
	ControllerGetNextBrokerID    int32 = 1012
	ControllerApplyBrokerID      int32 = 1013
	ControllerFencedMasterEpoch  int32 = 2000
	ControllerFencedSyncStateSet int32 = 2001
	ControllerInvalidMaster      int32 = 2002
	ControllerInvalidReplicas    int32 = 2003
	ControllerMasterNotAvailable int32 = 2004
	ControllerInvalidRequest     int32 = 2005
	ControllerBrokerNotAlive     int32 = 2006
	ControllerNotLeader          int32 = 2007
	ControllerMetadataNotExist   int32 = 2008
	ControllerInvalidCleanData   int32 = 2009
	ControllerNeedToBeRegistered int32 = 2010
	ControllerMasterStillExist   int32 = 2011
	ControllerElectMasterFailed  int32 = 2012
	ControllerAlterSyncFailed    int32 = 2013
	ControllerBrokerIDInvalid    int32 = 2014
)
