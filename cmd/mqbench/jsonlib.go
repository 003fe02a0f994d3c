package main

import (
	jsoniter "github.com/json-iterator/go"
	"github.com/rocketgo/rocketgo/internal/jsonlib"
)

// json is the one JSON library of the project, configured to read and
// write exactly as encoding/json does (map keys sorted, HTML escaped).
var json jsoniter.API = jsonlib.Std
