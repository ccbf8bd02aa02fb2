"""The AWS backend: DynamoDB and S3 through boto3."""
