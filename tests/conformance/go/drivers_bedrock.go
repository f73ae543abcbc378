package main

// aws-sdk-go-v2 bedrockruntime: the scenario's `request.operation` (default converse;
// converse_stream when the scenario streams; also invoke_model and
// invoke_model_with_response_stream), as py_boto3.py and bedrock.mjs call them.
// aws.NopRetryer (one attempt), static dummy credentials (no credential chain, no IMDS),
// an http.Client with the suite's timeout. A Converse that returns (stopReason
// guardrail_intervened) is described from its output (encoding/json writes StopReason), a
// ConverseStream's messageStop with errorclass.DescribeFinishReason.
import (
	"context"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime"
	"github.com/aws/aws-sdk-go-v2/service/bedrockruntime/types"

	errorclass "github.com/errorclass/classifier/clients/go"
	errorclassv1 "github.com/errorclass/classifier/clients/go/gen/errorclass/v1"
)

const invokeBody = `{"anthropic_version": "bedrock-2023-05-31", "max_tokens": 64, "messages": [{"role": "user", "content": "Say hello."}]}`

func bedrockCall(ctx context.Context, client *bedrockruntime.Client, operation, model string) result {
	messages := []types.Message{{Role: types.ConversationRoleUser, Content: []types.ContentBlock{&types.ContentBlockMemberText{Value: prompt}}}}
	switch operation {
	case "converse_stream":
		out, err := client.ConverseStream(ctx, &bedrockruntime.ConverseStreamInput{ModelId: aws.String(model), Messages: messages})
		if err != nil {
			return result{err: err}
		}
		stream := out.GetStream()
		defer stream.Close()
		var stop *errorclassv1.ExceptionDescriptor
		for event := range stream.Events() {
			if end, ok := event.(*types.ConverseStreamOutputMemberMessageStop); ok {
				stop = errorclass.DescribeFinishReason(string(end.Value.StopReason), "bedrock", "")
			}
		}
		if err := stream.Err(); err != nil {
			return result{err: err}
		}
		return result{response: stop}
	case "invoke_model":
		_, err := client.InvokeModel(ctx, &bedrockruntime.InvokeModelInput{ModelId: aws.String(model), Body: []byte(invokeBody), ContentType: aws.String("application/json")})
		return result{err: err}
	case "invoke_model_with_response_stream":
		out, err := client.InvokeModelWithResponseStream(ctx, &bedrockruntime.InvokeModelWithResponseStreamInput{ModelId: aws.String(model), Body: []byte(invokeBody), ContentType: aws.String("application/json")})
		if err != nil {
			return result{err: err}
		}
		stream := out.GetStream()
		defer stream.Close()
		for range stream.Events() {
		}
		return result{err: stream.Err()}
	default:
		out, err := client.Converse(ctx, &bedrockruntime.ConverseInput{ModelId: aws.String(model), Messages: messages})
		return returned(out, err, "")
	}
}

func init() {
	register("go.bedrock", []string{"bedrock"}, func(ctx context.Context, s scenario, base string) result {
		client := bedrockruntime.New(bedrockruntime.Options{
			Region:       "us-east-1",
			BaseEndpoint: aws.String(base),
			Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
				return aws.Credentials{AccessKeyID: awsKeyID, SecretAccessKey: awsSecret, Source: "conformance"}, nil
			}),
			Retryer:    aws.NopRetryer{},
			HTTPClient: &http.Client{Timeout: timeout},
		})
		operation := "converse"
		if s.Stream {
			operation = "converse_stream"
		}
		return bedrockCall(ctx, client, s.option("operation", operation), s.option("model", bedrockModel))
	})
}
