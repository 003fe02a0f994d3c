package role

import jsoniter "github.com/json-iterator/go"

// json is the one JSON library of the project, configured to read and
// write exactly as encoding/json does (map keys sorted, HTML escaped).
var json = jsoniter.ConfigCompatibleWithStandardLibrary
