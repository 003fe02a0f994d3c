package auth

// Helpers of the internal tests, for the served tests (package auth_test,
// which import processor, and processor imports auth).
var Resign = resign
