package acl

// Helpers of the internal tests, for the served tests (package acl_test,
// which import processor, and processor imports acl).
var Signed = signed
