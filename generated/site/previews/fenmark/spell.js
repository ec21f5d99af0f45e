window.rulesdslPreviews("fenmark/spell.html", {});
