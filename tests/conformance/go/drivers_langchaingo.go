package main

// langchaingo's OpenAI LLM: GenerateContent (with a streaming func when the scenario
// streams); api azure through its Azure API type. An http.Client with the suite's timeout.
import (
	"context"
	"net/http"

	"github.com/tmc/langchaingo/llms"
	lcopenai "github.com/tmc/langchaingo/llms/openai"
)

func init() {
	register("go.langchaingo-openai", []string{"openai", "azure"}, func(ctx context.Context, s scenario, base string) result {
		opts := []lcopenai.Option{lcopenai.WithHTTPClient(&http.Client{Timeout: timeout})}
		if s.API == "azure" {
			opts = append(opts, lcopenai.WithAPIType(lcopenai.APITypeAzure), lcopenai.WithBaseURL(base),
				lcopenai.WithAPIVersion(azureAPIVersion), lcopenai.WithToken(azureKey), lcopenai.WithModel(azureDeployment))
		} else {
			opts = append(opts, lcopenai.WithBaseURL(base+"/v1"), lcopenai.WithToken(openaiKey), lcopenai.WithModel(openaiModel))
		}
		llm, err := lcopenai.New(opts...)
		if err != nil {
			return result{err: err}
		}
		messages := []llms.MessageContent{llms.TextParts(llms.ChatMessageTypeHuman, prompt)}
		var callOpts []llms.CallOption
		if s.Stream {
			callOpts = append(callOpts, llms.WithStreamingFunc(func(context.Context, []byte) error { return nil }))
		}
		_, err = llm.GenerateContent(ctx, messages, callOpts...)
		return result{err: err}
	})
}
