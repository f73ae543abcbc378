package main

import "time"

// What every Go driver sends: the same requests as tests/conformance/apis.py and
// tests/conformance/node/apis.mjs.
const (
	timeout          = time.Second // the suite's 1 s: hang and connect_timeout wait this long
	openaiModel      = "gpt-4o-mini"
	azureDeployment  = "gpt-4o"
	azureAPIVersion  = "2024-10-21"
	anthropicModel   = "claude-sonnet-4-5"
	anthropicVersion = "2023-06-01"
	geminiModel      = "gemini-2.5-flash"
	bedrockModel     = "anthropic.claude-3-5-sonnet-20240620-v1:0"
	prompt           = "Say hello."
	openaiKey        = "sk-test"
	azureKey         = "azure-test-key"
	anthropicKey     = "sk-ant-test"
	geminiKey        = "gemini-test-key"
	awsKeyID         = "AKIATESTTESTTESTTEST"
	awsSecret        = "test-secret-key"
)
