window.rulesdslPreviews("fenmark/skill.html", {});
