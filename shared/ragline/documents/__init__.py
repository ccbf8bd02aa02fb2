"""Documents: parse uploaded files into sections, then chunk them for indexing."""

from ragline.documents.chunker import WordCachedCounter, chunk_document
from ragline.documents.limits import DEFAULT_DOCUMENT_SECONDS, DEFAULT_LIMITS, Deadline, ParseLimits
from ragline.documents.parsers import (
    SUPPORTED_EXTENSIONS,
    ParsedDocument,
    Section,
    extension_of,
    is_supported,
    parse_document,
)
from ragline.documents.sentences import split_sentences

__all__ = [
    "DEFAULT_DOCUMENT_SECONDS",
    "DEFAULT_LIMITS",
    "SUPPORTED_EXTENSIONS",
    "Deadline",
    "ParseLimits",
    "ParsedDocument",
    "Section",
    "WordCachedCounter",
    "chunk_document",
    "extension_of",
    "is_supported",
    "parse_document",
    "split_sentences",
]
